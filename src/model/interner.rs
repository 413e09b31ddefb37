//! String interning: names and stream pointers are stored once and referenced by a u32 id.

use rustc_hash::FxHashMap;

/// An interned string's id. Id 0 is always the empty string ("no value").
pub type NameId = u32;

/// A string table: each distinct string stored once.
#[derive(Debug, Clone)]
pub struct Interner {
    strings: Vec<Box<str>>,
    /// Keyed by bytes so a lookup of a CSV cell needs no UTF-8 check.
    ids: FxHashMap<Box<[u8]>, NameId>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut me = Interner {
            strings: Vec::new(),
            ids: FxHashMap::default(),
        };
        me.intern("");
        me
    }
}

impl Interner {
    /// An interner holding only the empty string (id 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `s`, adding it if new.
    pub fn intern(&mut self, s: &str) -> NameId {
        self.intern_bytes(s.as_bytes())
    }

    /// The id of raw cell bytes (invalid UTF-8 is replaced, never rejected).
    pub fn intern_bytes(&mut self, b: &[u8]) -> NameId {
        self.intern_bytes_with(b, |b| String::from_utf8_lossy(b).into())
    }

    /// The id of raw cell bytes; `decode` turns bytes seen for the first time into text (e.g.
    /// GB18030 for cells that are not UTF-8). Later lookups of the same bytes reuse the id.
    pub fn intern_bytes_with(
        &mut self,
        b: &[u8],
        decode: impl FnOnce(&[u8]) -> Box<str>,
    ) -> NameId {
        if let Some(&id) = self.ids.get(b) {
            return id;
        }
        let id = self.strings.len() as NameId;
        self.strings.push(decode(b));
        self.ids.insert(b.into(), id);
        id
    }

    /// The id of `b` if interned, found by its bytes with no UTF-8 check (bytes
    /// [`Interner::intern_bytes`] read lossily are found as they were): a dump's rows repeat
    /// a few thousand call stacks millions of times, and only a new one need be checked.
    pub fn lookup_bytes(&self, b: &[u8]) -> Option<NameId> {
        self.ids.get(b).copied()
    }

    /// The string of an id; the empty string for an unknown id.
    pub fn get(&self, id: NameId) -> &str {
        self.strings.get(id as usize).map(|s| &**s).unwrap_or("")
    }

    /// The id of `s` if interned.
    pub fn lookup(&self, s: &str) -> Option<NameId> {
        self.ids.get(s.as_bytes()).copied()
    }

    /// Bytes held by the strings and their index (approximate: allocator overhead not counted).
    pub fn heap_bytes(&self) -> usize {
        let text: usize = self.strings.iter().map(|s| s.len()).sum();
        // Each string is kept twice (the list and the index key) plus a pointer pair and an id.
        text * 2 + self.strings.len() * (2 * size_of::<Box<str>>() + size_of::<NameId>())
    }

    /// How many strings (including the empty one).
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Always false: the empty string is always present.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// Adds every string of `other` and returns, per id of `other`, the id here.
    pub fn merge(&mut self, other: &Interner) -> Vec<NameId> {
        other.strings.iter().map(|s| self.intern(s)).collect()
    }
}

/// The id of the last text interned through it, for a column whose rows mostly repeat the
/// row before (a dump's pool, an op's name at its start and end): a repeat costs one
/// comparison with the interned text, not a hash and a lookup, and nothing is copied. Ids are the [`Interner`]'s own, so the order in which
/// texts are first numbered does not change.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recent(Option<NameId>);

impl Recent {
    /// `s`'s id in `interner` (the one it was last used with), added when new.
    pub fn intern(&mut self, interner: &mut Interner, s: &str) -> NameId {
        if let Some(id) = self.0
            && interner.get(id) == s
        {
            return id;
        }
        let id = interner.intern(s);
        self.0 = Some(id);
        id
    }

    /// The id it holds when `b` are the bytes of that id's text (no UTF-8 check needed:
    /// they are text), with nothing added.
    pub fn holds(&self, interner: &Interner, b: &[u8]) -> Option<NameId> {
        self.0.filter(|&id| interner.get(id).as_bytes() == b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_once_and_merges_with_a_remap() {
        let mut a = Interner::new();
        assert_eq!(a.intern(""), 0);
        let x = a.intern("aten::mm");
        assert_eq!(a.intern("aten::mm"), x);
        let mut b = Interner::new();
        let y = b.intern("aten::add");
        let x2 = b.intern("aten::mm");
        let remap = a.merge(&b);
        assert_eq!(a.get(remap[y as usize]), "aten::add");
        assert_eq!(remap[x2 as usize], x);
        assert_eq!(a.get(9999), "");
    }

    #[test]
    fn a_recent_text_has_the_interners_id() {
        let (mut a, mut recent) = (Interner::new(), Recent::default());
        let mm = a.intern("aten::mm");
        let names = [
            "aten::add",
            "aten::add",
            "aten::mm",
            // (As long as the text before it, another text.)
            "aten::mv",
            "",
            "aten::mm",
        ];
        let ids: Vec<NameId> = names.iter().map(|n| recent.intern(&mut a, n)).collect();
        let add = a.lookup("aten::add").expect("interned");
        let mv = a.lookup("aten::mv").expect("interned");
        assert_eq!(ids, [add, add, mm, mv, 0, mm]);
        assert_eq!(a.len(), 4);
    }
}
