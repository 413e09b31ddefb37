//! The fields of a PyTorch `[memory]` event that memsight keeps: one table
//! ([`MEMORY_FIELDS`]) of each field's key as PyTorch writes it and where it sits (in the
//! event, or in its `args`). The one-pass and template readers of
//! [`super::memory_event`] and the careful serde reader ([`MemoryObject`], used by
//! [`crate::ingest::trace_view::parse_memory_event`]) all look keys up here, so a field is
//! added or renamed in one line.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// A field of a `[memory]` event that the readers keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryField {
    /// `ts` (µs).
    Ts,
    /// `pid`.
    Pid,
    /// `tid`.
    Tid,
    /// `args.Addr`.
    Addr,
    /// `args.Bytes` (negative for a free).
    Bytes,
    /// `args."Total Allocated"`.
    TotalAllocated,
    /// `args."Total Reserved"`.
    TotalReserved,
    /// `args."Device Type"`.
    DeviceType,
    /// `args."Device Id"`.
    DeviceId,
}

/// Where a field sits in the event's object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// A key of the event itself.
    Event,
    /// A key of its `args` object.
    Args,
}

/// Writes the table and the key lookup from one list, so they cannot disagree (the lookup is
/// a `match`, which the compiler turns into a switch on length and bytes: the one-pass reader
/// looks up every key of every event).
macro_rules! memory_fields {
    ($($field:ident = $key:literal at $level:ident),* $(,)?) => {
        /// Every field kept: the field, its key, where it sits. The one table the readers share.
        pub const MEMORY_FIELDS: [(MemoryField, &[u8], Level); [$(MemoryField::$field),*].len()] =
            [$((MemoryField::$field, $key, Level::$level)),*];

        impl MemoryField {
            /// The field whose key is `key` at `level`, if one is kept.
            pub fn of_key(level: Level, key: &[u8]) -> Option<MemoryField> {
                match key {
                    $($key if level == Level::$level => Some(MemoryField::$field),)*
                    _ => None,
                }
            }
        }
    };
}

memory_fields! {
    Ts = b"ts" at Event,
    Pid = b"pid" at Event,
    Tid = b"tid" at Event,
    Addr = b"Addr" at Args,
    Bytes = b"Bytes" at Args,
    TotalAllocated = b"Total Allocated" at Args,
    TotalReserved = b"Total Reserved" at Args,
    DeviceType = b"Device Type" at Args,
    DeviceId = b"Device Id" at Args,
}

/// How many fields are kept.
pub const FIELD_COUNT: usize = MEMORY_FIELDS.len();

impl MemoryField {
    /// Its place in [`MEMORY_FIELDS`] (and in a [`RawMemoryEvent`]).
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The fields of a `[memory]` event as raw JSON text (numbers as written, strings quoted).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RawMemoryEvent<'a> {
    /// Whether the event has `args`.
    pub has_args: bool,
    values: [Option<&'a str>; FIELD_COUNT],
}

impl<'a> RawMemoryEvent<'a> {
    /// `field`'s text, if the event has it.
    pub fn get(&self, field: MemoryField) -> Option<&'a str> {
        self.values[field.index()]
    }

    /// Sets `field`'s text.
    pub fn set(&mut self, field: MemoryField, text: Option<&'a str>) {
        self.values[field.index()] = text;
    }
}

/// A key of an event's object as the serde reader sorts it.
enum Key {
    Name,
    Args,
    Field(MemoryField),
    Other,
}

/// Reads a key at one level (escaped keys decoded, as serde's derive does).
struct KeyAt(Level);

impl<'de> de::DeserializeSeed<'de> for KeyAt {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeyAt {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
        Ok(match (self.0, key) {
            (Level::Event, "name") => Key::Name,
            (Level::Event, "args") => Key::Args,
            (level, key) => {
                MemoryField::of_key(level, key.as_bytes()).map_or(Key::Other, Key::Field)
            }
        })
    }
}

/// A `[memory]` event's object as the careful (serde) reader reads it: its name and the kept
/// fields as raw JSON. A duplicate kept key is an error, as the hand readers refuse it.
#[derive(Default)]
pub struct MemoryObject<'a> {
    /// `name` (empty when absent).
    pub name: Cow<'a, str>,
    /// Whether `args` is an object (`null` or absent: no args).
    pub has_args: bool,
    values: [Option<&'a RawValue>; FIELD_COUNT],
}

impl<'a> MemoryObject<'a> {
    /// The kept fields as text.
    pub fn raw(&self) -> RawMemoryEvent<'a> {
        RawMemoryEvent {
            has_args: self.has_args,
            values: self.values.map(|v| v.map(RawValue::get)),
        }
    }
}

/// Fills `values` from a map at `level`, refusing a kept key seen twice.
fn fill<'de, A: MapAccess<'de>>(
    map: &mut A,
    level: Level,
    values: &mut [Option<&'de RawValue>; FIELD_COUNT],
    mut other: impl FnMut(Key, &mut A) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    let mut seen = [false; FIELD_COUNT];
    while let Some(key) = map.next_key_seed(KeyAt(level))? {
        match key {
            Key::Field(f) => {
                if std::mem::replace(&mut seen[f.index()], true) {
                    return Err(de::Error::custom("duplicate field"));
                }
                values[f.index()] = map.next_value::<Option<&'de RawValue>>()?;
            }
            key => other(key, map)?,
        }
    }
    Ok(())
}

/// The `args` object's kept fields.
struct ArgsFields<'a>([Option<&'a RawValue>; FIELD_COUNT]);

impl<'de> Deserialize<'de> for ArgsFields<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ArgsFields<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an args object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut values = [None; FIELD_COUNT];
                fill(&mut map, Level::Args, &mut values, |_, map| {
                    map.next_value::<IgnoredAny>().map(|_| ())
                })?;
                Ok(ArgsFields(values))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for MemoryObject<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MemoryObject<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an event object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut values = [None; FIELD_COUNT];
                let (mut name, mut args) = (None::<Cow<'de, str>>, None::<Option<ArgsFields<'de>>>);
                fill(&mut map, Level::Event, &mut values, |key, map| match key {
                    Key::Name if name.is_some() => Err(de::Error::duplicate_field("name")),
                    Key::Name => {
                        let text: Cow<'de, str> = map.next_value::<BorrowedText<'de>>()?.0;
                        name = Some(text);
                        Ok(())
                    }
                    Key::Args if args.is_some() => Err(de::Error::duplicate_field("args")),
                    Key::Args => {
                        args = Some(map.next_value()?);
                        Ok(())
                    }
                    _ => map.next_value::<IgnoredAny>().map(|_| ()),
                })?;
                let args = args.flatten();
                if let Some(a) = &args {
                    for (v, a) in values.iter_mut().zip(a.0) {
                        *v = v.or(a);
                    }
                }
                Ok(MemoryObject {
                    name: name.unwrap_or_default(),
                    has_args: args.is_some(),
                    values,
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// A string, borrowed when it has no escapes (as `#[serde(borrow)] Cow<str>` reads it).
struct BorrowedText<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for BorrowedText<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = BorrowedText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(BorrowedText(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(BorrowedText(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kept_key_is_found_at_its_own_level_only() {
        for (i, &(field, key, level)) in MEMORY_FIELDS.iter().enumerate() {
            assert_eq!(field.index(), i, "the table is in the enum's order");
            assert_eq!(MemoryField::of_key(level, key), Some(field));
            let other = if level == Level::Event {
                Level::Args
            } else {
                Level::Event
            };
            assert_eq!(MemoryField::of_key(other, key), None);
        }
    }

    #[test]
    fn the_serde_reader_keeps_the_fields_of_the_table() {
        let text = r#"{"name": "[memory]", "ts": 1.5, "pid": "7", "tid": 3, "x": [1, {"a": 2}],
            "args": {"Addr": 10, "Bytes": -4, "Total Allocated": 6, "Total Reserved": 8,
                     "Device Type": 1, "Device Id": 0, "Other": "y"}}"#;
        let obj: MemoryObject<'_> = serde_json::from_str(text).unwrap();
        let raw = obj.raw();
        assert_eq!(obj.name, "[memory]");
        let got: Vec<Option<&str>> = MEMORY_FIELDS.iter().map(|&(f, _, _)| raw.get(f)).collect();
        let want = ["1.5", "\"7\"", "3", "10", "-4", "6", "8", "1", "0"].map(Some);
        assert_eq!(got, want);
        assert!(raw.has_args);
        // A kept key twice is refused, as the hand readers refuse it; `args: null` is no args.
        assert!(serde_json::from_str::<MemoryObject<'_>>(r#"{"ts": 1, "ts": 2}"#).is_err());
        let none: MemoryObject<'_> = serde_json::from_str(r#"{"args": null}"#).unwrap();
        assert!(!none.has_args);
    }
}
