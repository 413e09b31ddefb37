//! English counts with the noun agreeing: `1 block`, `2 blocks`, `0 blocks`. Every English
//! count the CLI, the app and the exports print goes through here (Chinese has no plural).

/// `one` when `n` is 1, else `many`.
pub fn noun(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// `n` and its noun: `1 block`, `3 blocks`.
pub fn count(n: u64, one: &'static str, many: &'static str) -> String {
    format!("{n} {}", noun(n, one, many))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "block", "blocks"), "1 block");
        assert_eq!(count(0, "block", "blocks"), "0 blocks");
        assert_eq!(count(2, "step", "steps"), "2 steps");
        assert_eq!(noun(11, "rank", "ranks"), "ranks");
    }
}
