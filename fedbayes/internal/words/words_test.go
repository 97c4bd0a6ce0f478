package words

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		word string
		want string
	}{
		{0, "run", "runs"},
		{1, "run", "run"},
		{2, "seed", "seeds"},
		{-1, "round", "rounds"},
	} {
		if got := Plural(c.n, c.word); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}
