//! Command lines that memsight prints for a person or an assistant to run (`explain`'s `next`
//! lines, the roles advice's `whatif` lever, a note naming `memsight snapshot DIR`): every
//! argument quoted by one function, so that a file named
//! `x'; touch PWNED; echo '.json`, `$(…)`, a space, a newline or a leading `-` is one argument
//! when the line is pasted, never code.
//!
//! On Unix the quoting is POSIX shell: plain words as they are, everything else in single
//! quotes (`'\''` for a quote); an argument holding a control character or bytes that are not
//! UTF-8 is written `$'…'` with `\xNN` escapes (bash, zsh, ksh and POSIX.1-2024 shells read
//! it). On Windows it is PowerShell's: single quotes, each quote doubled (PowerShell also reads
//! the typographic quotes U+2018 to U+201B as quotes, so those are doubled too). Hand-written:
//! the shell quoting crates take `&str` only and know neither non-UTF-8 paths nor PowerShell.

use std::ffi::OsStr;
use std::path::Path;

/// Characters a POSIX shell never reads as anything but part of a word.
fn posix_plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b)
}

/// `arg` quoted for a POSIX shell.
pub fn posix(arg: &[u8]) -> String {
    if !arg.is_empty() && arg.iter().all(|&b| posix_plain(b)) {
        // Plain bytes are ASCII: the slice is UTF-8.
        return String::from_utf8_lossy(arg).into_owned();
    }
    match std::str::from_utf8(arg) {
        Ok(text) if !text.chars().any(char::is_control) => {
            format!("'{}'", text.replace('\'', r"'\''"))
        }
        _ => dollar_quoted(arg),
    }
}

/// `arg` as `$'…'`: printable UTF-8 as it is, `\\` and `\'` escaped, every other byte `\xNN`.
fn dollar_quoted(arg: &[u8]) -> String {
    let mut out = String::from("$'");
    for chunk in arg.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str(r"\\"),
                '\'' => out.push_str(r"\'"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('\'');
    out
}

/// `arg` quoted for PowerShell: in single quotes, each single quote (and its typographic
/// forms) doubled.
pub fn powershell(arg: &str) -> String {
    let mut out = String::from("'");
    for c in arg.chars() {
        if matches!(c, '\'' | '\u{2018}'..='\u{201b}') {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// `arg` quoted for this platform's shell (POSIX on Unix, PowerShell on Windows).
pub fn quote(arg: &OsStr) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        posix(arg.as_bytes())
    }
    #[cfg(not(unix))]
    {
        powershell(&arg.to_string_lossy())
    }
}

/// A path as one argument: quoted, and, when it is relative and starts with `-`, written
/// `./-…` so that no command reads it as an option.
pub fn quote_path(path: &Path) -> String {
    let dashed = path.as_os_str().as_encoded_bytes().first() == Some(&b'-');
    match dashed {
        true => quote(Path::new(".").join(path).as_os_str()),
        false => quote(path.as_os_str()),
    }
}

/// An option with its value as one argument (`--rank=-1`, quoted as a whole), so that a value
/// starting with `-` is never read as another option.
pub fn option(flag: &str, value: &str) -> String {
    quote(OsStr::new(&format!("{flag}={value}")))
}

/// `memsight SUBCOMMAND PATH ARGS…`: the path quoted by [`quote_path`], each of `args` already
/// quoted (by [`option`] or [`quote`]) or a plain word.
pub fn memsight(subcommand: &str, path: &Path, args: &[String]) -> String {
    let mut line = format!("memsight {subcommand} {}", quote_path(path));
    for a in args {
        line.push(' ');
        line.push_str(a);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What bash makes of `quoted`: the bytes of each argument.
    #[cfg(unix)]
    fn through_bash(quoted: &str, dir: &Path) -> Vec<Vec<u8>> {
        let out = std::process::Command::new("bash")
            .current_dir(dir)
            .arg("-c")
            .arg(format!("printf '%s\\0' {quoted}"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{quoted}");
        out.stdout
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    /// Names an attacker or an unlucky user gives a file.
    fn hostile() -> Vec<Vec<u8>> {
        vec![
            b"x'; touch PWNED; echo '.pt.trace.json".to_vec(),
            b"$(touch PWNED).json".to_vec(),
            b"`touch PWNED`".to_vec(),
            b"a b\tc".to_vec(),
            b"line\nbreak; touch PWNED".to_vec(),
            b"-rf".to_vec(),
            b"\\'\\\"$HOME".to_vec(),
            "显存 分析/rank_0".as_bytes().to_vec(),
            b"bad\xff\xfe bytes".to_vec(),
            b"\x1b[31mred".to_vec(),
            b"!!".to_vec(),
            b"*".to_vec(),
        ]
    }

    #[cfg(unix)]
    #[test]
    fn every_hostile_name_is_one_argument_and_runs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for name in hostile() {
            let q = posix(&name);
            let got = through_bash(&q, dir.path());
            assert_eq!(got, vec![name.clone()], "{q}");
            assert!(!q.contains('\n'), "one line: {q}");
        }
        assert!(!dir.path().join("PWNED").exists());
    }

    #[test]
    fn plain_words_stay_plain_and_chinese_stays_readable() {
        assert_eq!(posix(b"/data/run_1/rank-0.json"), "/data/run_1/rank-0.json");
        assert_eq!(posix("显存/a b".as_bytes()), "'显存/a b'");
        assert_eq!(posix(b""), "''");
        assert_eq!(posix(b"it's"), r"'it'\''s'");
        assert_eq!(posix(b"a\nb"), r"$'a\x0ab'");
    }

    #[test]
    fn a_dashed_path_or_value_is_never_an_option() {
        assert!(quote_path(Path::new("-x.json")).contains("./-x.json"));
        assert_eq!(quote_path(Path::new("/abs/-x")), "/abs/-x");
        #[cfg(unix)]
        assert_eq!(option("--rank", "-1"), "--rank=-1");
        #[cfg(unix)]
        assert_eq!(option("--rank", "a b"), "'--rank=a b'");
    }

    #[test]
    fn powershell_doubles_every_kind_of_quote() {
        assert_eq!(powershell("x'; rm -r C:\\"), "'x''; rm -r C:\\'");
        assert_eq!(powershell("a’b"), "'a’’b'");
        assert_eq!(powershell("$(calc)"), "'$(calc)'");
    }
}
