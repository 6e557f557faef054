//! Decimal digits of other scripts (`١`, `१`, `๑`, `１`): Faber numbers are written in
//! ASCII digits in every reader locale, so such a digit is LEX001 like any character
//! that starts no token; this module gives that diagnostic its hint, the ASCII number.

/// The code point of the digit zero of each script whose digits are read for the hint
/// (each script's ten digits are consecutive from its zero).
const ZEROS: &[u32] = &[
    0x0660, // Arabic-Indic
    0x06F0, // Extended Arabic-Indic (Persian, Urdu)
    0x0966, // Devanagari
    0x09E6, // Bengali
    0x0A66, // Gurmukhi
    0x0AE6, // Gujarati
    0x0B66, // Oriya
    0x0BE6, // Tamil
    0x0C66, // Telugu
    0x0CE6, // Kannada
    0x0D66, // Malayalam
    0x0E50, // Thai
    0x0ED0, // Lao
    0x0F20, // Tibetan
    0x1040, // Myanmar
    0x17E0, // Khmer
    0x1810, // Mongolian
    0xFF10, // Fullwidth
];

fn ascii_digit(c: char) -> Option<char> {
    let code = c as u32;
    ZEROS
        .iter()
        .find(|&&z| (z..z + 10).contains(&code))
        .and_then(|&z| char::from_digit(code - z, 10))
}

/// `text` in ASCII digits when every character of it is a decimal digit of another
/// script, else None.
pub(super) fn as_ascii_number(text: &str) -> Option<String> {
    text.chars().map(ascii_digit).collect()
}

#[cfg(test)]
mod tests {
    use super::as_ascii_number;

    #[test]
    fn other_scripts_digits() {
        assert_eq!(as_ascii_number("١٢"), Some("12".to_string()));
        assert_eq!(as_ascii_number("१"), Some("1".to_string()));
        assert_eq!(as_ascii_number("๙"), Some("9".to_string()));
        assert_eq!(as_ascii_number("１２"), Some("12".to_string()));
        assert_eq!(as_ascii_number("１x"), None);
        assert_eq!(as_ascii_number("·"), None);
    }
}
