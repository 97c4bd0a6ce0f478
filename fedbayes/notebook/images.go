package notebook

import (
	"fmt"
	"html"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"strings"

	"fedbayes.dev/fedbayes/data"
	"github.com/janpfeifer/gonb/gonbui"
)

// SampleData returns n examples of d drawn without replacement with a seeded permutation, or d
// itself when n is 0 or not smaller than d.
func SampleData(d *data.Dataset, n int, seed int64) *data.Dataset {
	if n <= 0 || n >= d.Len() {
		return d
	}
	idx := rand.New(rand.NewPCG(uint64(seed), 0x03)).Perm(d.Len())[:n]
	return d.Subset(idx)
}

// Rotate90 turns every image of x ([N, H, W, C] flattened, H == W, shape [H, W, C]) a quarter turn
// clockwise.
func Rotate90(x []float32, shape []int) []float32 {
	h, w, c := shape[0], shape[1], shape[2]
	out := make([]float32, len(x))
	for n := 0; n < len(x)/(h*w*c); n++ {
		img, dst := x[n*h*w*c:], out[n*h*w*c:]
		for i := 0; i < h; i++ {
			for j := 0; j < w; j++ {
				// output pixel (i, j) comes from input pixel (h-1-j, i)
				copy(dst[(i*w+j)*c:(i*w+j+1)*c], img[((h-1-j)*w+i)*c:((h-1-j)*w+i+1)*c])
			}
		}
	}
	return out
}

// Resize scales the single-channel images of x from shape from ([H, W, ...]) to shape to by
// bilinear interpolation, pixel centres aligned and edges clamped.
func Resize(x []float32, from, to []int) []float32 {
	fh, fw, th, tw := from[0], from[1], to[0], to[1]
	n := len(x) / (fh * fw)
	out := make([]float32, n*th*tw)
	coord := func(i, t, f int) (int, int, float32) {
		s := (float64(i)+0.5)*float64(f)/float64(t) - 0.5
		s = math.Max(0, math.Min(s, float64(f-1)))
		lo := int(s)
		hi := min(lo+1, f-1)
		return lo, hi, float32(s - float64(lo))
	}
	for k := 0; k < n; k++ {
		img, dst := x[k*fh*fw:], out[k*th*tw:]
		for i := 0; i < th; i++ {
			y0, y1, fy := coord(i, th, fh)
			for j := 0; j < tw; j++ {
				x0, x1, fx := coord(j, tw, fw)
				top := img[y0*fw+x0]*(1-fx) + img[y0*fw+x1]*fx
				bottom := img[y1*fw+x0]*(1-fx) + img[y1*fw+x1]*fx
				dst[i*tw+j] = top*(1-fy) + bottom*fy
			}
		}
	}
	return out
}

// GalleryHTML is an HTML table with one row per input set: its name, its size and its first count
// grey images (shape [H, W, 1], pixel 0 black, 1 white), each scaled to about 56 pixels high.
func GalleryHTML(sets []InputSet, shape []int, count int) (string, error) {
	h, w := shape[0], shape[1]
	scale := (56 + h - 1) / h
	var rows strings.Builder
	for _, set := range sets {
		img := image.NewGray(image.Rect(0, 0, count*(w*scale+4), h*scale))
		for i := range img.Pix {
			img.Pix[i] = 255
		}
		for n := range min(count, len(set.Labels)) {
			for y := range h * scale {
				for x := range w * scale {
					v := set.X[n*h*w+(y/scale)*w+x/scale]
					img.SetGray(n*(w*scale+4)+x, y, color.Gray{Y: uint8(255 * math.Max(0, math.Min(1, float64(v))))})
				}
			}
		}
		src, err := gonbui.EmbedImageAsPNGSrc(img)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&rows, `<tr><td style="text-align:right;padding-right:1em">%s (%d)</td><td><img src="%s"></td></tr>`,
			html.EscapeString(set.Name), len(set.Labels), src)
	}
	return "<table>" + rows.String() + "</table>", nil
}

// Gallery displays GalleryHTML in a GoNB cell; outside a notebook it does nothing.
func Gallery(sets []InputSet, shape []int, count int) error {
	return displayHTML(GalleryHTML(sets, shape, count))
}
