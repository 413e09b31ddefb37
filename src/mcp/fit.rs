//! An MCP answer kept small: an assistant's context is its working memory, and a 17 KB answer
//! to "which module holds the peak" crowds out the question. Lists are cut (the commands list
//! largest first, so the first entries are kept) until the answer fits, and the answer says
//! which lists were cut and how to ask for them whole (`full: true`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The size an answer is kept under unless the call asks for it whole, bytes of compact JSON.
pub const ANSWER_BYTES: usize = 4096;

/// What the note on the cut lists takes at most, bytes (kept free under the limit).
const NOTE_BYTES: usize = 600;

/// `v` with its longest lists halved, longest first, until its compact JSON is at most `max`
/// bytes (or no list has more than one entry); a cut answer gets `"cut"`: each cut list's JSON
/// pointer and how many entries it had, and what to call for all of them.
pub fn fit(mut v: Value, max: usize) -> Value {
    let limit = max.saturating_sub(NOTE_BYTES);
    let mut cut: BTreeMap<String, usize> = BTreeMap::new();
    while v.to_string().len() > limit {
        let Some((pointer, _)) = longest_list(&v, String::new()) else {
            break;
        };
        let Some(list) = v.pointer_mut(&pointer).and_then(Value::as_array_mut) else {
            break;
        };
        let n = list.len();
        cut.entry(pointer).or_insert(n);
        list.truncate((n / 2).max(1));
    }
    if !cut.is_empty()
        && let Value::Object(m) = &mut v
    {
        m.insert(
            "cut".into(),
            json!({
                "lists": cut,
                "note": format!(
                    "answer kept under {} KB: these lists hold their first entries only \
                     (largest first); call again with full: true for all of them",
                    max / 1024
                ),
            }),
        );
    }
    v
}

/// The list (more than one entry) whose JSON is the longest, by its JSON pointer.
fn longest_list(v: &Value, at: String) -> Option<(String, usize)> {
    let mut best: Option<(String, usize)> = None;
    let mut consider = |c: Option<(String, usize)>| {
        if let Some(c) = c
            && best.as_ref().is_none_or(|b| c.1 > b.1)
        {
            best = Some(c);
        }
    };
    match v {
        Value::Array(items) => {
            if items.len() > 1 {
                consider(Some((at.clone(), v.to_string().len())));
            }
            for (i, x) in items.iter().enumerate() {
                consider(longest_list(x, format!("{at}/{i}")));
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                let key = k.replace('~', "~0").replace('/', "~1");
                consider(longest_list(x, format!("{at}/{key}")));
            }
        }
        _ => {}
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_answer_keeps_the_first_entries_of_its_longest_lists_and_says_so() {
        let rows: Vec<Value> = (0..500)
            .map(|i| json!({"name": format!("op{i}"), "mib": i}))
            .collect();
        let small: Vec<Value> = (0..3).map(|i| json!(i)).collect();
        let v = json!({"rank": "0", "rows": rows, "small": small, "a/b": [1, 2]});
        let f = fit(v, ANSWER_BYTES);
        assert!(
            f.to_string().len() <= ANSWER_BYTES,
            "{}",
            f.to_string().len()
        );
        let kept = f["rows"].as_array().unwrap();
        assert!(!kept.is_empty() && kept.len() < 500);
        assert_eq!(
            kept[0]["name"], "op0",
            "the first (largest) entries are kept"
        );
        assert_eq!(f["cut"]["lists"]["/rows"], 500);
        assert_eq!(
            f["small"].as_array().unwrap().len(),
            3,
            "a short list is left whole"
        );
        // A small answer is as it was.
        let s = json!({"x": [1, 2, 3]});
        assert_eq!(fit(s.clone(), ANSWER_BYTES), s);
    }
}
