package strictjson_test

import (
	"errors"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/internal/strictjson"
	"fedbayes.dev/fedbayes/internal/strictjson/strictjsontest"
)

// TestDecodeFileVariants: every hostile variant of a valid object is refused by DecodeFile with the
// file's name, the variant's problem and a line and column; the object itself decodes.
func TestDecodeFileVariants(t *testing.T) {
	type doc struct {
		Round int     `json:"round"`
		Name  string  `json:"name"`
		Loss  float64 `json:"loss"`
	}
	valid := []byte(`{"name": "a", "round": 3, "loss": 0.5}`)
	var d doc
	if err := strictjson.DecodeFile("x/status.json", valid, &d); err != nil || d.Round != 3 {
		t.Fatalf("valid: %+v, %v", d, err)
	}
	variants, err := strictjsontest.Variants(valid)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range variants {
		t.Run(v.Name, func(t *testing.T) {
			var d doc
			err := strictjson.DecodeFile("x/status.json", v.Doc, &d)
			if err == nil || !strings.HasPrefix(err.Error(), "x/status.json: ") || !strings.Contains(err.Error(), v.Want) {
				t.Fatalf("DecodeFile(%s) = %v; want x/status.json: ... %s", v.Doc, err, v.Want)
			}
			var fe *strictjson.FileError
			if !errors.As(err, &fe) || fe.Path != "x/status.json" {
				t.Errorf("%v is not a *FileError naming the file", err)
			}
			if !strings.Contains(err.Error(), "line 1, column ") {
				t.Errorf("%v gives no position", err)
			}
		})
	}
}
