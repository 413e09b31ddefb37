//! The two languages memsight speaks. Texts that ingest and the analyses produce (notes,
//! causes, skip reasons) are rendered by one function that takes a [`Lang`]; the CLI and JSON
//! use English, the app the user's choice.

/// A language of the UI and of the texts rendered for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// 简体中文.
    Zh,
}

impl Lang {
    /// Both, in menu order.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The language of a locale tag (`zh_CN.UTF-8`, `zh-Hans-CN`, `en-US`): Chinese for any
    /// `zh`, else English.
    pub fn from_locale(tag: &str) -> Lang {
        let t = tag.trim().to_ascii_lowercase();
        if t == "zh" || t.starts_with("zh_") || t.starts_with("zh-") || t.starts_with("zh.") {
            Lang::Zh
        } else {
            Lang::En
        }
    }

    /// The language the environment asks for: `LC_ALL`, `LC_MESSAGES`, `LANG`, in that order
    /// as POSIX reads them (`C` and `POSIX` name none); `None` when none is set.
    pub fn from_env() -> Option<Lang> {
        ["LC_ALL", "LC_MESSAGES", "LANG"]
            .into_iter()
            .find_map(|var| {
                std::env::var(var)
                    .ok()
                    .filter(|v| !v.is_empty() && v != "C" && v != "POSIX")
                    .map(|v| Lang::from_locale(&v))
            })
    }

    /// The stored form.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    /// From the stored form.
    pub fn parse(code: &str) -> Option<Lang> {
        Lang::ALL.into_iter().find(|l| l.code() == code.trim())
    }

    /// The language's own name, for the menu.
    pub fn name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Zh => "简体中文",
        }
    }

    /// `en` or `zh`, whichever is this language's: for a text written once in both.
    pub fn pick<T>(self, en: T, zh: T) -> T {
        match self {
            Lang::En => en,
            Lang::Zh => zh,
        }
    }
}
