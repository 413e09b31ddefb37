//! The malformed fixture set: every kind of bad input a real folder can hold, with known
//! expectations (tests assert the exact skipped rows).

use std::fs;
use std::io;
use std::path::Path;

/// The memory_record of `bad_rows_ascend_pt`: BOM, CRLF, quoted cells, and 5 bad rows
/// (lines 4, 5, 6, 7, 8) among 5 good ones (lines 2, 3, 9, 10, 11).
pub const BAD_MEMORY_RECORD: &str = "\u{feff}Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\r\n\
APP,\"1000000000000000.000\t\",,100.0,,,NPU:3\r\n\
PTA+GE,1000000000000100.500\t,10.0,20.0,10.0,55,NPU:3\r\n\
PTA+GE,1000000000000200.000\t,11.0\r\n\
PTA+GE,not-a-time,12.0,20.0,12.0,55,NPU:3\r\n\
PTA+GE,,12.0,20.0,12.0,55,NPU:3\r\n\
PTA+GE,1000000000000300.000\t,12.5MB,20.0,12.0,55,NPU:3\r\n\
,1000000000000350.000\t,12.5,20.0,12.0,55,NPU:3\r\n\
PTA+GE,1.0000000000004E+15,30.0,40.0,30.0,55,NPU:3\r\n\
PTA+GE,1000000000000500.000\t,N/A,40.0,N/A,55,NPU:3\r\n\
APP,1000000000000050.000\t,,110.0,,,NPU:3\r\n";

/// The operator_memory of `bad_rows_ascend_pt`: 2 bad rows (lines 3 and 5) among 3 good ones.
pub const BAD_OPERATOR_MEMORY: &str = "Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Release Total Allocated(MB),Release Total Reserved(MB),Device Type\n\
aten::mm,1024.0,1000000000000100.500\t,1000000000000400.000\t,299.500\t,10.0,20.0,9.0,20.0,NPU:3\n\
aten::add,,1000000000000150.000\t,,,10.0,20.0,,,NPU:3\n\
,-512.0,,1000000000000300.000\t,,,,,,NPU:3\n\
aten::bad,64.0,1000000000000160.000\t,soon,,10.0,20.0,,,NPU:3\n\
\"aten::cat, fused\",2048.5,1000000000000170.000\t,,,10.0,20.0,,,NPU:3\n";

/// An npu_module_mem whose header lacks Total Reserved: the file is skipped with a warning.
pub const BAD_NPU_MODULE_MEM: &str =
    "Component,Timestamp(us),Device\nHCCL,1000000000000000.000\t,NPU:3\n";

/// Writes the malformed set under `root`.
pub fn write_malformed(root: &Path) -> io::Result<()> {
    let bad = root.join("bad_rows_ascend_pt");
    let out = bad.join("ASCEND_PROFILER_OUTPUT");
    fs::create_dir_all(&out)?;
    fs::write(bad.join("profiler_info_7.json"), "{\"rank_id\": 7}\n")?;
    fs::write(out.join("memory_record.csv"), BAD_MEMORY_RECORD)?;
    fs::write(out.join("operator_memory.csv"), BAD_OPERATOR_MEMORY)?;
    fs::write(out.join("npu_module_mem.csv"), BAD_NPU_MODULE_MEM)?;

    // A 0-byte memory_record (msprof placeholders look like this).
    let empty = root.join("empty_ascend_pt/ASCEND_PROFILER_OUTPUT");
    fs::create_dir_all(&empty)?;
    fs::write(empty.join("memory_record.csv"), "")?;
    fs::write(empty.join("operator_memory.csv"), "")?;

    // A DB that is not SQLite.
    let db = root.join("corrupt_db_ascend_pt/ASCEND_PROFILER_OUTPUT");
    fs::create_dir_all(&db)?;
    fs::write(
        db.join("ascend_pytorch_profiler_9.db"),
        b"this is not a database\x00\x01\x02",
    )?;

    // operator_memory without memory_record: a table-only rank.
    let lone = root.join("no_record_ascend_pt/ASCEND_PROFILER_OUTPUT");
    fs::create_dir_all(&lone)?;
    fs::write(lone.join("operator_memory.csv"), BAD_OPERATOR_MEMORY)?;

    // memory_record without its required Timestamp column.
    let nohdr = root.join("no_timestamp_ascend_pt/ASCEND_PROFILER_OUTPUT");
    fs::create_dir_all(&nohdr)?;
    fs::write(
        nohdr.join("memory_record.csv"),
        "Component,Total Allocated(MB),Total Reserved(MB)\nPTA+GE,1,2\n",
    )?;
    Ok(())
}
