// Package words holds the small English helpers that fedbayes's messages and reports share.
package words

// Plural is word with an "s" unless n is 1: Plural(1, "run") is "run", Plural(0, "run") "runs".
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
