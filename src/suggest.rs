//! "Did you mean …?" suggestions for misspelt names, by edit distance.

/// Returns the candidate closest to `input`, if one is close enough to be a likely typo.
///
/// Close enough means a Levenshtein distance under 3, or under a third of the input's length
/// for long names, the rule `just` uses for recipe names.
///
/// The distance is at least the difference in length, so a candidate that far apart is
/// passed over unmeasured: a 4 MB name costs one count per candidate, not a table of 4 MB
/// times its length.
pub fn suggest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let length = input.chars().count();
    let limit = (length / 3).max(3);
    candidates
        .into_iter()
        .filter(|candidate| candidate.chars().count().abs_diff(length) < limit)
        .map(|candidate| (strsim::levenshtein(input, candidate), candidate))
        .filter(|(distance, _)| *distance < limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::suggest;

    #[test]
    fn suggests_the_closest_name() {
        assert_eq!(
            suggest("serch", ["search", "product-details"]),
            Some("search")
        );
        assert_eq!(
            suggest("product-detail", ["search", "product-details"]),
            Some("product-details")
        );
    }

    #[test]
    fn stays_quiet_when_nothing_is_close() {
        assert_eq!(suggest("weather", ["search", "product-details"]), None);
    }

    #[test]
    fn a_huge_input_is_answered_at_once() {
        // Before, 4 MiB against each candidate was a table of millions of cells (minutes
        // for a manifest of a thousand tools); now it is a count.
        let huge = format!("search{}", "x".repeat(4 << 20));
        assert_eq!(suggest(&huge, ["search", "product-details"]), None);
        assert_eq!(suggest("searchxx", ["search"]), Some("search"));
    }
}
