//! Whitespace and affixes: the pieces live on `Normalized` (`strip`, `prepend`); this file is
//! their place in the stage's layout and their tests' home.

#[cfg(test)]
mod tests {
    use super::super::Normalized;

    #[test]
    fn strip_keeps_the_alignment_of_what_stays() {
        let mut n = Normalized::new("  hé  ");
        n.strip(true, true);
        assert_eq!(n.normalized(), "hé");
        assert_eq!(n.original_range(0, n.normalized().len()), (2, 5));
    }

    #[test]
    fn prepend_aligns_with_the_first_char() {
        let mut n = Normalized::new("ab");
        n.prepend("▁");
        assert_eq!(n.normalized(), "▁ab");
        assert_eq!(n.original_range(0, 3), (0, 1));
        assert_eq!(n.original_range(4, 5), (1, 2));
        let mut empty = Normalized::new("");
        empty.prepend("▁");
        assert_eq!(empty.normalized(), "");
    }
}
