//! "Did you mean …?" suggestions for misspelt names, by edit distance.

/// Returns the candidate closest to `input`, if one is close enough to be a likely typo.
///
/// Close enough means a Levenshtein distance under 3, or under a third of the input's length
/// for long names, the rule `just` uses for recipe names.
pub fn suggest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (input.chars().count() / 3).max(3);
    candidates
        .into_iter()
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
}
