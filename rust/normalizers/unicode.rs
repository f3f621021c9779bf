//! The four Unicode normalization forms, with HF's tables (`unicode-normalization-alignments`,
//! Unicode 9) so that results equal HF's even for characters later versions changed. Its
//! iterators already yield HF's `(char, change)` stream.

use super::Normalized;
use unicode_normalization_alignments::UnicodeNormalization;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnicodeForm {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
}

impl UnicodeForm {
    pub fn name(self) -> &'static str {
        match self {
            UnicodeForm::Nfc => "NFC",
            UnicodeForm::Nfd => "NFD",
            UnicodeForm::Nfkc => "NFKC",
            UnicodeForm::Nfkd => "NFKD",
        }
    }

    pub fn apply(self, n: &mut Normalized) {
        let text = n.normalized().to_string();
        match self {
            UnicodeForm::Nfc => n.transform(text.nfc().collect::<Vec<_>>(), 0),
            UnicodeForm::Nfd => n.transform(text.nfd().collect::<Vec<_>>(), 0),
            UnicodeForm::Nfkc => n.transform(text.nfkc().collect::<Vec<_>>(), 0),
            UnicodeForm::Nfkd => n.transform(text.nfkd().collect::<Vec<_>>(), 0),
        }
    }
}
