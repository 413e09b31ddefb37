//! Number formatting exactly as the profilers write it, and exact for round trips.

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
    }
}
