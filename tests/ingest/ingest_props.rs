//! Property tests: no byte sequence panics the value parsers or the CSV and DB readers, or makes
//! them write into the folder they read; exact decimals round-trip. (That no input makes them
//! crawl is measured by `benches/hostile.rs`, not timed here.)

use memsight::ingest::value::{device_id, parse_int, parse_scaled, trim_cell};
use memsight::ingest::{LoadControl, discover, load_rank};
use proptest::prelude::*;

const RECORD_HEADER: &str = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\n";
const OPERATOR_HEADER: &str = "Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Release Total Allocated(MB),Release Total Reserved(MB),Device Type\n";

/// Cells that look almost like numbers: the inputs most likely to trip a parser.
fn numberish() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            Just(b'0'),
            Just(b'9'),
            Just(b'.'),
            Just(b'-'),
            Just(b'+'),
            Just(b'e'),
            Just(b'E'),
            Just(b'\t'),
            Just(b'"'),
            Just(b' '),
            any::<u8>()
        ],
        0..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn value_parsers_never_panic(bytes in prop_oneof![numberish(), proptest::collection::vec(any::<u8>(), 0..64)], factor in prop_oneof![Just(1i64), Just(1000), Just(1024), Just(1 << 20), Just(1_024_000), 1i64..i64::MAX]) {
        let _ = parse_scaled(&bytes, factor);
        let _ = parse_int(&bytes);
        let _ = device_id(&bytes);
        let t = trim_cell(&bytes);
        prop_assert!(t.len() <= bytes.len());
    }

    #[test]
    fn microsecond_timestamps_round_trip_exactly(ns in 0i64..4_000_000_000_000_000_000) {
        let cell = format!("{}.{:03}\t", ns / 1000, ns % 1000);
        prop_assert_eq!(parse_scaled(cell.as_bytes(), 1000).unwrap().unwrap().value, ns);
    }

    #[test]
    fn mib_values_round_trip_exactly(bytes in -(1i64 << 50)..(1i64 << 50)) {
        // The shortest exact decimal of bytes / 2^20, as the generator (and Python's repr) writes it.
        let sign = if bytes < 0 { "-" } else { "" };
        let a = bytes.unsigned_abs();
        let mut frac = String::new();
        let mut rem = a % (1 << 20);
        while rem != 0 {
            rem *= 10;
            frac.push(char::from(b'0' + (rem >> 20) as u8));
            rem &= (1 << 20) - 1;
        }
        let cell = format!("{sign}{}.{}", a >> 20, if frac.is_empty() { "0".into() } else { frac });
        prop_assert_eq!(parse_scaled(cell.as_bytes(), 1 << 20).unwrap().unwrap().value, bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn csv_readers_never_panic_on_any_bytes(
        record_body in proptest::collection::vec(prop_oneof![numberish(), proptest::collection::vec(prop_oneof![Just(b','), Just(b'\n'), Just(b'\r'), Just(b'"'), any::<u8>()], 0..30)], 0..20),
        operator_body in proptest::collection::vec(any::<u8>(), 0..400),
        with_header in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("r_ascend_pt/ASCEND_PROFILER_OUTPUT");
        std::fs::create_dir_all(&out).unwrap();
        let mut rec = if with_header { RECORD_HEADER.as_bytes().to_vec() } else { Vec::new() };
        for (i, cell) in record_body.iter().enumerate() {
            rec.extend_from_slice(cell);
            rec.push(if i % 7 == 6 { b'\n' } else { b',' });
        }
        let mut op = OPERATOR_HEADER.as_bytes().to_vec();
        op.extend_from_slice(&operator_body);
        std::fs::write(out.join("memory_record.csv"), &rec).unwrap();
        std::fs::write(out.join("operator_memory.csv"), &op).unwrap();
        std::fs::write(out.join("npu_module_mem.csv"), &operator_body).unwrap();
        std::fs::write(out.join("static_op_mem.csv"), &rec).unwrap();
        if let Ok(p) = discover(tmp.path()) {
            for r in &p.ranks {
                if let Ok(d) = load_rank(r, &LoadControl::new()) {
                    // Whatever loaded is internally consistent.
                    prop_assert_eq!(d.records.time_ns.len(), d.records.reserved.len());
                    prop_assert!(d.records.time_ns.windows(2).all(|w| w[0] <= w[1]));
                    let _ = memsight::export::summarize(&d);
                }
            }
        }
    }
}

/// Bytes shaped like a rank folder for `memsight::fuzzing::folder`: CSV-ish parts (headers,
/// numbers, separators, quotes, CR/LF, UTF-16 and UTF-8 BOMs) split by its separator line.
fn folder_bytes() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(RECORD_HEADER.as_bytes().to_vec()),
        Just(OPERATOR_HEADER.as_bytes().to_vec()),
        Just(b"\n=====\n".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"\xFF\xFE".to_vec()),
        Just(b"1700000000000000.250\t".to_vec()),
        Just(b"PTA+GE".to_vec()),
        Just(b"APP".to_vec()),
        prop_oneof![
            Just(b','),
            Just(b';'),
            Just(b'\t'),
            Just(b'"'),
            Just(b'\r'),
            Just(b'\n')
        ]
        .prop_map(|b| vec![b]),
        numberish(),
    ];
    proptest::collection::vec(token, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// No folder content panics discovery, loading or the summary, and none makes them write
    /// into the folder (the entry point lists it before and after).
    #[test]
    fn no_folder_content_panics_or_writes(data in folder_bytes()) {
        memsight::fuzzing::folder(&data);
    }

    /// Bytes that start like SQLite but are not a valid database never panic or write.
    #[test]
    fn no_db_bytes_panic_or_write(tail in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut data = b"SQLite format 3\0".to_vec();
        data.extend_from_slice(&tail);
        memsight::fuzzing::db(&data);
    }
}
