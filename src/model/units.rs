//! Exact decimal formatting of integer quantities: what the profilers write (µs with 3 decimals,
//! MiB and KiB as exact binary fractions) and what the TSV/CSV export writes (plain numbers Excel
//! reads as numbers, no thousands separators, no rounding).

/// `ns` as torch_npu/msprof write timestamps: µs with 3 decimals (`1736408883573957.920`).
pub fn us3(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// `v / 2^k` as an exact, shortest decimal (`981462016 / 2^20` → `935.9951171875`).
pub fn dyadic(v: i64, k: u32) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs() as u128;
    let den = 1u128 << k;
    let int = a / den;
    let mut rem = a % den;
    if rem == 0 {
        return format!("{sign}{int}.0");
    }
    let mut frac = String::new();
    while rem != 0 {
        rem *= 10;
        frac.push(char::from(b'0' + (rem / den) as u8));
        rem %= den;
    }
    format!("{sign}{int}.{frac}")
}

/// Bytes as MiB (exact).
pub fn mib(bytes: i64) -> String {
    dyadic(bytes, 20)
}

/// Bytes as KiB (exact).
pub fn kib(bytes: i64) -> String {
    dyadic(bytes, 10)
}

/// `ns` as milliseconds, exact (up to 6 decimals, trailing zeros trimmed): `1500000` → `1.5`.
pub fn ms_exact(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let frac = format!("{:06}", a % 1_000_000);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{sign}{}", a / 1_000_000)
    } else {
        format!("{sign}{}.{frac}", a / 1_000_000)
    }
}

/// `v / 1000` as an exact decimal (MindSpore's "MB" = KiB / 1000).
pub fn thousandths(v: i64) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    let frac = format!("{:03}", a % 1000);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{sign}{}.0", a / 1000)
    } else {
        format!("{sign}{}.{frac}", a / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_decimals() {
        assert_eq!(us3(1_736_408_883_573_957_920), "1736408883573957.920");
        assert_eq!(mib(981_462_016), "935.9951171875");
        assert_eq!(mib(1 << 20), "1.0");
        assert_eq!(kib(19_268_096), "18816.5");
        assert_eq!(kib(-512), "-0.5");
        assert_eq!(thousandths(1_234_500), "1234.5");
        assert_eq!(thousandths(7000), "7.0");
        assert_eq!(ms_exact(1_500_000), "1.5");
        assert_eq!(ms_exact(387_436_760), "387.43676");
        assert_eq!(ms_exact(-1), "-0.000001");
        assert_eq!(ms_exact(2_000_000), "2");
    }
}
