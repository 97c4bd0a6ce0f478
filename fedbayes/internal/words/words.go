// Package words holds the small English helpers that fedbayes's messages and reports share.
package words

import (
	"strconv"
	"strings"
)

// Plural is word with an "s" unless n is 1: Plural(1, "run") is "run", Plural(0, "run") "runs".
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Thousands formats n with commas between groups of three digits: 60000 is "60,000", -1000 "-1,000".
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
