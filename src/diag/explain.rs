//! The `faber explain` entries: one Markdown file per code under `docs/explain/`
//! (`docs/explain/SEM001.md`), embedded into the binary at build time so the same
//! text can be read in the repository and printed by the command. Each entry says
//! what the code means, shows a minimal program that triggers it and how to fix it;
//! tests/explain.rs runs every example and fix through the binary. The format is
//! described in docs/diagnostics.md ("Explanations").

macro_rules! entries {
    ($($id:ident)*) => {
        /// Every entry as (code id, Markdown text), in catalogue order.
        pub const ENTRIES: &[(&str, &str)] = &[$((
            stringify!($id),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/explain/", stringify!($id), ".md")),
        )),*];
    };
}

entries! {
    LEX001 LEX002 LEX003 LEX004 LEX005 LEX006 LEX007 LEX008 LEX009
    LEX010 LEX011 LEX012 LEX013 LEX014
    PARSE001 PARSE002 PARSE003 PARSE004 PARSE005 PARSE006 PARSE007 PARSE008
    SEM001 SEM002 SEM003 SEM004 SEM005 SEM006 SEM007 SEM008 SEM009
    SEM010 SEM011 SEM012 SEM013 SEM014 SEM015 SEM016 SEM017 SEM018
    SEM019 SEM020 SEM021 SEM022 SEM023 SEM024 SEM025 SEM026 SEM027
    SEM028 SEM029
    RUN001 RUN002 RUN003 RUN004 RUN005 RUN006 RUN007 RUN008 RUN009
    RUN010 RUN011 RUN012 RUN013 RUN014 RUN015 RUN016 RUN017 RUN018 RUN019 RUN020
    RUN021 RUN022 RUN023 RUN024 RUN025
    CLI001 CLI002 CLI003 CLI004 CLI005 CLI006 CLI007 CLI008 CLI009 CLI010 CLI011
    CLI012 CLI013
    CLI014 CLI015 CLI016 CLI017 CLI018
}

/// The entry for `id`, ignoring case (`"sem001"` finds SEM001).
pub fn entry(id: &str) -> Option<&'static str> {
    ENTRIES
        .iter()
        .find(|(code, _)| code.eq_ignore_ascii_case(id))
        .map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::codes;

    #[test]
    fn every_catalogue_code_has_an_entry_in_catalogue_order() {
        let ids: Vec<&str> = ENTRIES.iter().map(|(id, _)| *id).collect();
        let want: Vec<&str> = codes::ALL.iter().map(|c| c.id).collect();
        assert_eq!(ids, want);
    }

    #[test]
    fn lookup_ignores_case() {
        assert_eq!(entry("sem001"), entry("SEM001"));
        assert!(entry("SEM001").unwrap().starts_with("# SEM001: "));
        assert_eq!(entry("SEM999"), None);
    }
}
