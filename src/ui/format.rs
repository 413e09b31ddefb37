//! Numbers for reading (not for export): thousands separators, sensible decimals, a memory unit
//! chosen for the range shown.

/// `1234567.891` with `decimals` → `1,234,567.89`.
pub fn grouped(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = s
        .split_once('.')
        .map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let mut out = String::new();
    for (k, ch) in int.chars().enumerate() {
        if k > 0 && (int.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    if v < 0.0 && out.chars().any(|c| c != '0' && c != '.' && c != ',') {
        format!("-{out}")
    } else {
        out
    }
}

/// A memory unit for an axis or a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemUnit {
    /// MiB.
    Mb,
    /// GiB.
    Gb,
}

impl MemUnit {
    /// GB when the largest value is at least 10 GiB, else MB.
    pub fn for_max(bytes: f64) -> MemUnit {
        if bytes.abs() >= 10.0 * 1024.0 * 1024.0 * 1024.0 {
            MemUnit::Gb
        } else {
            MemUnit::Mb
        }
    }
    /// Bytes per unit.
    pub fn bytes(self) -> f64 {
        match self {
            MemUnit::Mb => 1024.0 * 1024.0,
            MemUnit::Gb => 1024.0 * 1024.0 * 1024.0,
        }
    }
    /// The label.
    pub fn label(self) -> &'static str {
        match self {
            MemUnit::Mb => "MB",
            MemUnit::Gb => "GB",
        }
    }
}

/// Bytes for reading, e.g. `12,345.67 MB` or `10.52 GB` (unit chosen by size).
pub fn bytes(b: i64) -> String {
    bytes_in(b, MemUnit::for_max(b as f64))
}

/// Bytes in `unit`, for reading: `12,345.67 MB`.
pub fn bytes_in(b: i64, unit: MemUnit) -> String {
    format!("{} {}", grouped(b as f64 / unit.bytes(), 2), unit.label())
}

impl MemUnit {
    /// One unit for a whole list (a list never mixes GB and MB): chosen by its largest value.
    pub fn for_list(values: impl IntoIterator<Item = i64>) -> MemUnit {
        let max = values.into_iter().map(i64::unsigned_abs).max().unwrap_or(0);
        MemUnit::for_max(max as f64)
    }
}

/// Milliseconds for reading: `1,234.567 ms`.
pub fn ms(v: f64) -> String {
    format!("{} ms", grouped(v, 3))
}

/// A long span of ns for reading, in days, hours or seconds (`units`: their words), one decimal:
/// `134.0 days`.
pub fn long_duration(ns: i64, units: [&str; 3]) -> String {
    let s = ns as f64 / 1e9;
    let (v, unit) = if s >= 86_400.0 {
        (s / 86_400.0, units[0])
    } else if s >= 3_600.0 {
        (s / 3_600.0, units[1])
    } else {
        (s, units[2])
    };
    format!("{} {unit}", grouped(v, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_has_one_unit() {
        let gb = 12i64 << 30;
        let u = MemUnit::for_list([gb, 5 << 20, -(1 << 20)]);
        assert_eq!(u, MemUnit::Gb);
        assert_eq!(bytes_in(5 << 20, u), "0.00 GB");
        assert_eq!(bytes_in(gb, u), "12.00 GB");
        assert_eq!(MemUnit::for_list([5 << 20, 1 << 20]), MemUnit::Mb);
        assert_eq!(MemUnit::for_list([]), MemUnit::Mb);
    }

    #[test]
    fn thousands_and_units() {
        assert_eq!(grouped(1234567.891, 2), "1,234,567.89");
        assert_eq!(grouped(-1234.5, 1), "-1,234.5");
        assert_eq!(grouped(999.0, 0), "999");
        assert_eq!(grouped(-0.0001, 2), "0.00");
        assert_eq!(bytes(1 << 20), "1.00 MB");
        assert_eq!(bytes(11 << 30), "11.00 GB");
        assert_eq!(ms(387.43676), "387.437 ms");
    }
}
