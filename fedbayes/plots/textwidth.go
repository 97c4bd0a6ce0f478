package plots

import (
	"strings"
	"unicode"
)

// Advance widths of the printable ASCII characters (32-126) in thousandths of an em, of DejaVu Sans
// and DejaVu Sans Bold: the fonts Chromium and the SVG viewers of Debian draw "sans-serif" with,
// read from their hmtx tables. TextWidth measures titles and legend entries with them, so that a
// title is shortened before it would be clipped; other sans-serif fonts (Arial, Helvetica) are
// narrower, so the measure errs on the safe side there.
var (
	dejaVuSans = [95]uint16{
		318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,
		636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,
		1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,
		603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,
		500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
		635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
	}
	dejaVuSansBold = [95]uint16{
		348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365,
		696, 696, 696, 696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 580,
		1000, 774, 762, 734, 830, 683, 683, 821, 837, 372, 372, 775, 637, 995, 837, 850,
		733, 850, 770, 720, 682, 812, 774, 1103, 771, 724, 725, 457, 365, 457, 838, 500,
		500, 675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665, 343, 1042, 712, 687,
		716, 716, 493, 595, 478, 712, 652, 924, 645, 652, 582, 712, 365, 712, 838,
	}
)

// TextWidth returns the width in pixels of one line of text s at font size px in DejaVu Sans (bold
// when bold is set). Characters outside ASCII count as the widest common ones (Greek letters and
// symbols such as β, σ, ± are 0.64-0.84 em; wide scripts 1 em).
func TextWidth(s string, px float64, bold bool) float64 {
	table := &dejaVuSans
	if bold {
		table = &dejaVuSansBold
	}
	var em float64
	for _, r := range s {
		switch {
		case r >= 32 && r < 127:
			em += float64(table[r-32]) / 1000
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Hiragana, r) ||
			unicode.Is(unicode.Katakana, r) || r == '…' || r == '—':
			em += 1
		case unicode.IsMark(r):
		default:
			em += 0.85
		}
	}
	return em * px
}

// FitText breaks text into at most maxLines lines of at most width pixels at font size px (bold as
// given), at spaces; a word longer than a line is cut. When the text does not fit, the last line
// ends with "…". It returns the lines and whether the whole text fits.
func FitText(text string, width, px float64, bold bool, maxLines int) ([]string, bool) {
	words := strings.Fields(text)
	if len(words) == 0 {
		return nil, true
	}
	if maxLines < 1 {
		return nil, false
	}
	var lines []string
	cur := ""
	for len(words) > 0 {
		w := words[0]
		try := w
		if cur != "" {
			try = cur + " " + w
		}
		if TextWidth(try, px, bold) <= width {
			cur, words = try, words[1:]
			continue
		}
		if cur == "" { // a word wider than a line: cut it, at least one character a line
			cur = cutToWidth(w, width, px, bold, "")
			if cur == "" {
				cur = string([]rune(w)[:1])
			}
			words[0] = w[len(cur):]
		}
		if len(lines) == maxLines-1 {
			rest := strings.Join(append([]string{cur}, words...), " ")
			return append(lines, cutToWidth(rest, width, px, bold, "…")), false
		}
		lines, cur = append(lines, cur), ""
	}
	return append(lines, cur), true
}

// cutToWidth returns the longest proper prefix of s that, followed by suffix, fits in width pixels,
// with the suffix (spaces and punctuation before a suffix dropped), or the suffix alone.
func cutToWidth(s string, width, px float64, bold bool, suffix string) string {
	r := []rune(s)
	for n := len(r); n > 0; n-- {
		head := string(r[:n])
		if suffix != "" {
			head = strings.TrimRight(head, " ,;:(/")
		}
		if TextWidth(head+suffix, px, bold) <= width {
			return head + suffix
		}
	}
	return suffix
}
