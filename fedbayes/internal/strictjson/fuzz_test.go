package strictjson_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/internal/strictjson"
	"fedbayes.dev/fedbayes/internal/strictjson/strictjsontest"
)

// FuzzDecodeFile feeds arbitrary documents to the strict decoder every JSON reader uses. It must
// never panic; what Check accepts is valid JSON that encoding/json decodes to the same value as
// DecodeFile, whose re-encoding Check accepts again; every refusal names the file. The seeds are a
// valid object and its strictjsontest variants.
func FuzzDecodeFile(f *testing.F) {
	valid := []byte(`{"a": [1, 2.5, {"b": null}], "c": "x", "d": true}`)
	f.Add(valid)
	variants, err := strictjsontest.Variants(valid)
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range variants {
		f.Add(v.Doc)
	}
	f.Add([]byte("\xEF\xBB\xBF{}"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var got any
		err := strictjson.DecodeFile("f.json", doc, &got)
		checked := strictjson.Check(doc)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json: ") {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		if checked != nil {
			t.Fatalf("DecodeFile accepted %q, which Check refuses: %v", doc, checked)
		}
		var want any
		if err := json.Unmarshal(strictjson.StripBOM(doc), &want); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", doc, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q decodes to %v, encoding/json to %v", doc, got, want)
		}
		again, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if err := strictjson.Check(again); err != nil {
			t.Fatalf("the re-encoding %q of an accepted document is refused: %v", again, err)
		}
	})
}
