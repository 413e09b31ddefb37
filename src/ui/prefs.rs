//! What the app remembers between runs (eframe's storage): the language, the theme, the
//! recent folders and whether to reopen the last one; and what to open at start.

use super::i18n::Lang;

/// Storage key of the recent-folders list (one path per line).
pub const RECENT_KEY: &str = "memsight.recent";
/// Storage key of the language (`en`, `zh`).
pub const LANG_KEY: &str = "memsight.lang";
/// Storage key of the theme (`system`, `light`, `dark`).
pub const THEME_KEY: &str = "memsight.theme";
/// Storage key of "reopen the last profile at start" (`true`, `false`).
pub const REOPEN_KEY: &str = "memsight.reopen_last";
/// How many recent paths are kept.
pub const MAX_RECENT: usize = 10;

/// The colour theme the user chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThemePref {
    /// Follow the OS.
    #[default]
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

impl ThemePref {
    /// All, in menu order.
    pub const ALL: [ThemePref; 3] = [ThemePref::System, ThemePref::Light, ThemePref::Dark];

    /// The stored form.
    pub fn code(self) -> &'static str {
        match self {
            ThemePref::System => "system",
            ThemePref::Light => "light",
            ThemePref::Dark => "dark",
        }
    }

    /// From the stored form.
    pub fn parse(s: &str) -> Option<ThemePref> {
        ThemePref::ALL.into_iter().find(|t| t.code() == s.trim())
    }

    /// egui's preference.
    pub fn egui(self) -> egui::ThemePreference {
        match self {
            ThemePref::System => egui::ThemePreference::System,
            ThemePref::Light => egui::ThemePreference::Light,
            ThemePref::Dark => egui::ThemePreference::Dark,
        }
    }
}

/// The recent list from its stored form (one path per line).
pub fn parse_recent(s: &str) -> Vec<String> {
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .take(MAX_RECENT)
        .collect()
}

/// What was remembered.
#[derive(Debug, Clone, PartialEq)]
pub struct Prefs {
    /// The UI language.
    pub lang: Lang,
    /// The theme.
    pub theme: ThemePref,
    /// Recently opened paths, newest first.
    pub recent: Vec<String>,
    /// Started without a path, open the most recent one (when it still exists) instead of the
    /// demo. On unless the user turned it off.
    pub reopen_last: bool,
}

impl Default for Prefs {
    fn default() -> Self {
        Prefs {
            lang: Lang::default(),
            theme: ThemePref::default(),
            recent: Vec::new(),
            reopen_last: true,
        }
    }
}

/// What the window opens at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Startup {
    /// A path: the one given, or the last one opened.
    Path(std::path::PathBuf),
    /// The generated demo.
    Demo,
    /// The demo, because the last path opened (this one) is no longer there: the app says so.
    Gone(String),
}

/// What to open at a start without a path on the command line (one given is opened whatever
/// was stored, before the window is made: [`crate::ui::run`]): when `prefs` says so, the most
/// recent path if it still `exists` (else the demo, saying it is gone); else the demo.
pub fn startup(prefs: &Prefs, exists: impl Fn(&std::path::Path) -> bool) -> Startup {
    match prefs.recent.first().filter(|_| prefs.reopen_last) {
        Some(last) if exists(std::path::Path::new(last)) => Startup::Path(last.into()),
        Some(last) => Startup::Gone(last.clone()),
        None => Startup::Demo,
    }
}

impl Prefs {
    /// From eframe's storage; what was never stored takes the system's language and theme.
    pub fn load(storage: Option<&dyn eframe::Storage>) -> Prefs {
        let get = |k: &str| storage.and_then(|s| s.get_string(k));
        Prefs {
            lang: get(LANG_KEY)
                .and_then(|c| Lang::parse(&c))
                .unwrap_or_else(Lang::system),
            theme: get(THEME_KEY)
                .and_then(|c| ThemePref::parse(&c))
                .unwrap_or_default(),
            recent: get(RECENT_KEY)
                .map(|s| parse_recent(&s))
                .unwrap_or_default(),
            reopen_last: get(REOPEN_KEY).is_none_or(|v| v.trim() != "false"),
        }
    }

    /// Into eframe's storage.
    pub fn save(&self, storage: &mut dyn eframe::Storage) {
        storage.set_string(RECENT_KEY, self.recent.join("\n"));
        storage.set_string(LANG_KEY, self.lang.code().to_string());
        storage.set_string(THEME_KEY, self.theme.code().to_string());
        storage.set_string(REOPEN_KEY, self.reopen_last.to_string());
    }

    /// Puts `path` first in the recent list (not the generated demo: it is there anyway).
    pub fn remember(&mut self, path: &std::path::Path) {
        if crate::cli::is_demo(path) {
            return;
        }
        // Absolute: a path relative to the folder the app was started from means another
        // folder at the next start.
        let shown = std::path::absolute(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
            .to_string();
        self.recent.retain(|r| *r != shown);
        self.recent.insert(0, shown);
        self.recent.truncate(MAX_RECENT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn prefs(recent: &[&str], reopen_last: bool) -> Prefs {
        Prefs {
            recent: recent.iter().map(|s| s.to_string()).collect(),
            reopen_last,
            ..Prefs::default()
        }
    }

    #[test]
    fn start_on_the_last_path_that_exists_else_the_demo() {
        let all = |_: &Path| true;
        let none = |_: &Path| false;
        assert_eq!(
            startup(&prefs(&["/last", "/older"], true), all),
            Startup::Path("/last".into())
        );
        assert_eq!(startup(&prefs(&["/last"], false), all), Startup::Demo);
        assert_eq!(
            startup(&prefs(&["/gone"], true), none),
            Startup::Gone("/gone".into())
        );
        assert_eq!(startup(&prefs(&["/gone"], false), none), Startup::Demo);
        assert_eq!(startup(&prefs(&[], true), all), Startup::Demo);
    }

    /// Issue 43 item 5: a path opened as relative was remembered relative, so the next start
    /// from another folder found nothing and opened the demo without a word.
    #[test]
    fn a_path_is_remembered_absolute() {
        let mut p = Prefs::default();
        p.remember(Path::new("some/run"));
        let stored = PathBuf::from(&p.recent[0]);
        assert!(stored.is_absolute(), "{stored:?}");
        assert_eq!(stored, std::env::current_dir().unwrap().join("some/run"));
        // The same folder opened again, relative or absolute, is one entry.
        p.remember(&stored);
        assert_eq!(p.recent.len(), 1);
    }

    #[test]
    fn reopening_is_on_unless_turned_off() {
        assert!(Prefs::default().reopen_last);
        assert!(Prefs::load(None).reopen_last);
    }
}
