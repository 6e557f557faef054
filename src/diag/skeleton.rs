//! The skeleton of a spelling for "did you mean": what is left of a word when its
//! width and its diacritics are ignored. A fullwidth letter (`ｈ`, U+FF48) is its ASCII
//! letter and a letter with marks (`à`, `ệ`, `đ`) is its base letter, so `ｈａｍ` and
//! `hamm` are near the Vietnamese keyword `hàm`. Only suggestions use it: a name is
//! always compared as written.

/// Letters with diacritics, each run followed by `=` and the base letter they fold to.
const FOLDS: &[(&str, char)] = &[
    ("àáảãạăằắẳẵặâầấẩẫậäåā", 'a'),
    ("ÀÁẢÃẠĂẰẮẲẴẶÂẦẤẨẪẬÄÅĀ", 'A'),
    ("èéẻẽẹêềếểễệëē", 'e'),
    ("ÈÉẺẼẸÊỀẾỂỄỆËĒ", 'E'),
    ("ìíỉĩịïī", 'i'),
    ("ÌÍỈĨỊÏĪ", 'I'),
    ("òóỏõọôồốổỗộơờớởỡợöō", 'o'),
    ("ÒÓỎÕỌÔỒỐỔỖỘƠỜỚỞỠỢÖŌ", 'O'),
    ("ùúủũụưừứửữựüū", 'u'),
    ("ÙÚỦŨỤƯỪỨỬỮỰÜŪ", 'U'),
    ("ỳýỷỹỵÿ", 'y'),
    ("ỲÝỶỸỴŸ", 'Y'),
    ("đ", 'd'),
    ("Đ", 'D'),
    ("ç", 'c'),
    ("Ç", 'C'),
    ("ñ", 'n'),
    ("Ñ", 'N'),
];

/// One character folded: fullwidth ASCII to ASCII, a letter with marks to its base,
/// a combining mark (U+0300–U+036F) to nothing.
fn fold_char(c: char) -> Option<char> {
    let code = c as u32;
    if (0xFF01..=0xFF5E).contains(&code) {
        return char::from_u32(code - 0xFEE0);
    }
    if (0x0300..=0x036F).contains(&code) {
        return None;
    }
    if c.is_ascii() {
        return Some(c);
    }
    Some(
        FOLDS
            .iter()
            .find(|(run, _)| run.contains(c))
            .map_or(c, |&(_, base)| base),
    )
}

/// `word` with its width and diacritics folded away.
pub fn skeleton(word: &str) -> String {
    word.chars().filter_map(fold_char).collect()
}

#[cfg(test)]
mod tests {
    use super::skeleton;

    #[test]
    fn folds_width_and_marks() {
        assert_eq!(skeleton("ｈａｍ"), "ham");
        assert_eq!(skeleton("hàm"), "ham");
        assert_eq!(skeleton("thông_điệp"), "thong_diep");
        assert_eq!(skeleton("BẮT_ĐẦU"), "BAT_DAU");
        // decomposed: `a` + COMBINING GRAVE ACCENT
        assert_eq!(skeleton("ha\u{300}m"), "ham");
        // other scripts are left as they are
        assert_eq!(skeleton("ฟังก์ชัน"), "ฟังก์ชัน");
        assert_eq!(skeleton("函数"), "函数");
    }
}
