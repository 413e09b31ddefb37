//! What the app remembers between runs (eframe's storage): the language, the theme and the
//! recent folders.

use super::i18n::Lang;

/// Storage key of the recent-folders list (one path per line).
pub const RECENT_KEY: &str = "memsight.recent";
/// Storage key of the language (`en`, `zh`).
pub const LANG_KEY: &str = "memsight.lang";
/// Storage key of the theme (`system`, `light`, `dark`).
pub const THEME_KEY: &str = "memsight.theme";
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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prefs {
    /// The UI language.
    pub lang: Lang,
    /// The theme.
    pub theme: ThemePref,
    /// Recently opened paths, newest first.
    pub recent: Vec<String>,
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
        }
    }

    /// Into eframe's storage.
    pub fn save(&self, storage: &mut dyn eframe::Storage) {
        storage.set_string(RECENT_KEY, self.recent.join("\n"));
        storage.set_string(LANG_KEY, self.lang.code().to_string());
        storage.set_string(THEME_KEY, self.theme.code().to_string());
    }

    /// Puts `path` first in the recent list.
    pub fn remember(&mut self, path: &std::path::Path) {
        let shown = path.display().to_string();
        self.recent.retain(|r| *r != shown);
        self.recent.insert(0, shown);
        self.recent.truncate(MAX_RECENT);
    }
}
