package modeltest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/semrank/semrank/models"
)

// FileName is the name a LoadScore is given for the file it reads: every
// error a loader returns for a damaged model must name it.
const FileName = "mutated.model"

// LoadScore loads a model from raw as the package's own reader does,
// naming the file name in its errors, and, when that succeeds, scores a
// small input with the model, returning the scores.
type LoadScore func(raw []byte, name string) ([]float64, error)

// mutation is one damaged copy of a saved bundle.
type mutation struct {
	name string // what was done, for messages
	b    *models.Bundle
	huge bool // holds a value above Huge
}

// sections is a bundle's content, editable: the bundle API hides its maps.
type sections struct {
	manifest models.Manifest
	tensors  map[string]models.Tensor
	strs     map[string][]string
}

// Bundler is a model that writes itself as a bundle.
type Bundler interface {
	Bundle() (*models.Bundle, error)
}

// Saved returns m's model file, for Corruptions and Fuzz to start from.
func Saved(tb testing.TB, m Bundler) []byte {
	tb.Helper()
	b, err := m.Bundle()
	if err != nil {
		tb.Fatal(err)
	}
	return Encode(tb, b)
}

// SavedFile returns the file save writes, for models saved only to a
// path (see Saved).
func SavedFile(tb testing.TB, save func(path string) error) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "saved.model")
	if err := save(path); err != nil {
		tb.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// Encode returns a bundle's bytes (see Saved).
func Encode(tb testing.TB, b *models.Bundle) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func parse(tb testing.TB, raw []byte) *sections {
	tb.Helper()
	b, err := models.Parse(raw)
	if err != nil {
		tb.Fatal(err)
	}
	s := &sections{manifest: b.Manifest, tensors: map[string]models.Tensor{}, strs: map[string][]string{}}
	for _, sec := range b.Manifest.Sections {
		switch sec.Kind {
		case "f64":
			t, err := b.Tensor(sec.Name, 0)
			if err != nil {
				tb.Fatal(err)
			}
			s.tensors[sec.Name] = t
		case "strings":
			l, err := b.Strings(sec.Name)
			if err != nil {
				tb.Fatal(err)
			}
			s.strs[sec.Name] = l
		}
	}
	return s
}

// clone copies s deeply enough that editing the copy leaves s alone.
func (s *sections) clone() *sections {
	c := &sections{manifest: s.manifest, tensors: map[string]models.Tensor{}, strs: map[string][]string{}}
	c.manifest.Config = slices.Clone(s.manifest.Config)
	for k, t := range s.tensors {
		c.tensors[k] = models.Tensor{Shape: slices.Clone(t.Shape), Data: slices.Clone(t.Data)}
	}
	for k, l := range s.strs {
		c.strs[k] = slices.Clone(l)
	}
	return c
}

func (s *sections) bundle() *models.Bundle {
	b := models.New(s.manifest.Method, s.manifest.ModelVersion)
	b.Manifest = s.manifest
	for k, t := range s.tensors {
		b.AddTensor(k, t.Shape, t.Data)
	}
	for k, l := range s.strs {
		b.AddStrings(k, l)
	}
	return b
}

func (s *sections) tensorNames() []string { return sortedKeys(s.tensors) }
func (s *sections) stringNames() []string { return sortedKeys(s.strs) }

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// reshape returns t with its first dimension set to rows, keeping the
// values that still fit and padding with zeros.
func reshape(t models.Tensor, rows int) models.Tensor {
	shape := slices.Clone(t.Shape)
	shape[0] = rows
	data := make([]float64, size(shape))
	copy(data, t.Data)
	return models.Tensor{Shape: shape, Data: data}
}

// mutations lists the systematic damage Corruptions applies: every tensor,
// string list and config field of the bundle altered in turn.
func mutations(base *sections) []mutation {
	var out []mutation
	add := func(name string, edit func(s *sections)) {
		s := base.clone()
		edit(s)
		out = append(out, mutation{name, s.bundle(), s.hasHuge()})
		// Without a vocabulary hash a damaged vocabulary gets past the
		// hash check to the model's own checks (as for a model whose
		// manifest was edited along with it).
		if s.manifest.VocabHash != "" {
			s.manifest.VocabHash = ""
			out = append(out, mutation{name + ", vocabulary hash cleared", s.bundle(), s.hasHuge()})
		}
	}
	const huge = 1 << 40
	for _, n := range base.tensorNames() {
		t := base.tensors[n]
		add(fmt.Sprintf("tensor %q dropped", n), func(s *sections) { delete(s.tensors, n) })
		if len(t.Data) > 0 {
			for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 0.5, huge, -huge} {
				add(fmt.Sprintf("tensor %q value 0 set to %g", n, v), func(s *sections) { s.tensors[n].Data[0] = v })
				add(fmt.Sprintf("tensor %q last value set to %g", n, v), func(s *sections) { s.tensors[n].Data[len(t.Data)-1] = v })
			}
			for _, v := range []float64{math.NaN(), 0, -1, 1e308} {
				add(fmt.Sprintf("tensor %q all values set to %g", n, v), func(s *sections) {
					for i := range s.tensors[n].Data {
						s.tensors[n].Data[i] = v
					}
				})
			}
		}
		if len(t.Shape) == 0 {
			continue
		}
		for _, rows := range []int{0, 1, t.Shape[0] - 1, t.Shape[0] + 1, 2 * t.Shape[0]} {
			if rows < 0 || rows == t.Shape[0] {
				continue
			}
			add(fmt.Sprintf("tensor %q resized to %d rows", n, rows), func(s *sections) { s.tensors[n] = reshape(t, rows) })
		}
		add(fmt.Sprintf("tensor %q flattened", n), func(s *sections) { s.tensors[n] = models.Tensor{Shape: []int{len(t.Data)}, Data: t.Data} })
		add(fmt.Sprintf("tensor %q given a leading dimension", n), func(s *sections) {
			s.tensors[n] = models.Tensor{Shape: append([]int{1}, t.Shape...), Data: t.Data}
		})
		if len(t.Shape) == 2 && t.Shape[0] != t.Shape[1] {
			add(fmt.Sprintf("tensor %q transposed shape", n), func(s *sections) {
				s.tensors[n] = models.Tensor{Shape: []int{t.Shape[1], t.Shape[0]}, Data: t.Data}
			})
		}
	}
	for _, n := range base.stringNames() {
		l := base.strs[n]
		add(fmt.Sprintf("strings %q dropped", n), func(s *sections) { delete(s.strs, n) })
		add(fmt.Sprintf("strings %q emptied", n), func(s *sections) { s.strs[n] = nil })
		add(fmt.Sprintf("strings %q extended", n), func(s *sections) { s.strs[n] = append(s.strs[n], "zz-extra") })
		if len(l) > 0 {
			add(fmt.Sprintf("strings %q last dropped", n), func(s *sections) { s.strs[n] = s.strs[n][:len(l)-1] })
			add(fmt.Sprintf("strings %q first repeated", n), func(s *sections) { s.strs[n] = append(s.strs[n], l[0]) })
			add(fmt.Sprintf("strings %q first blanked", n), func(s *sections) { s.strs[n][0] = "" })
			add(fmt.Sprintf("strings %q reversed", n), func(s *sections) { slices.Reverse(s.strs[n]) })
		}
	}
	tn, sn := base.tensorNames(), base.stringNames()
	for i := range tn {
		for j := i + 1; j < len(tn); j++ {
			a, b := tn[i], tn[j]
			add(fmt.Sprintf("tensors %q and %q swapped", a, b), func(s *sections) { s.tensors[a], s.tensors[b] = s.tensors[b], s.tensors[a] })
		}
	}
	for i := range sn {
		for j := i + 1; j < len(sn); j++ {
			a, b := sn[i], sn[j]
			add(fmt.Sprintf("strings %q and %q swapped", a, b), func(s *sections) { s.strs[a], s.strs[b] = s.strs[b], s.strs[a] })
		}
	}
	for _, cfg := range []string{"", "null", "{}", "[]", `"x"`} {
		add(fmt.Sprintf("config %q", cfg), func(s *sections) { s.manifest.Config = json.RawMessage(cfg) })
	}
	var cfg map[string]json.RawMessage
	if json.Unmarshal(base.manifest.Config, &cfg) == nil {
		for _, k := range sortedKeys(cfg) {
			set := func(what string, v string) {
				add(fmt.Sprintf("config %s %s", k, what), func(s *sections) {
					c := map[string]json.RawMessage{}
					json.Unmarshal(s.manifest.Config, &c)
					if v == "" {
						delete(c, k)
					} else {
						c[k] = json.RawMessage(v)
					}
					s.manifest.Config, _ = json.Marshal(c)
				})
			}
			set("removed", "")
			set("null", "null")
			for _, v := range configValues(cfg[k]) {
				set("set to "+v, v)
			}
		}
	}
	add("vocabulary hash wrong", func(s *sections) { s.manifest.VocabHash = "0123456789abcdef" })
	return out
}

// configValues returns bad values for a config field holding v.
func configValues(v json.RawMessage) []string {
	var x any
	json.Unmarshal(v, &x)
	switch x := x.(type) {
	case float64:
		return []string{"0", "-1", "0.5", "16777216", "1099511627776", "1e300", "-1e300"}
	case string:
		return []string{`""`, `"bogus"`}
	case bool:
		if x {
			return []string{"false"}
		}
		return []string{"true"}
	case []any:
		return []string{"[]", "[-1]", "[0]", "[1099511627776]", "[16777216]", "[1,2,3,4,5,6,7,8,9]"}
	}
	return []string{"0", `""`}
}

// outcome is what loading (and scoring) one damaged file did.
type outcome struct {
	scores []float64
	err    error
	panic  any
	stack  []byte
	alloc  uint64 // bytes allocated
}

func try(load LoadScore, raw []byte) (o outcome) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	defer func() {
		runtime.ReadMemStats(&after)
		o.alloc = after.TotalAlloc - before.TotalAlloc
		if p := recover(); p != nil {
			o.panic, o.stack = p, debug.Stack()
		}
	}()
	o.scores, o.err = load(raw, FileName)
	return o
}

// Huge is the magnitude above which a finite value may make scoring
// overflow (a weight of 1e160 squared is infinite). Loaders do not bound
// magnitudes: no bound is right for every model, and rerank refuses a
// non-finite stage or fusion score, naming the stage. So a model holding
// such a value may load and then score ±Inf or NaN; it must still not
// panic.
const Huge = 1e100

// hasHuge reports whether s holds a value of magnitude above Huge, in a
// tensor or its config.
func (s *sections) hasHuge() bool {
	for _, t := range s.tensors {
		for _, x := range t.Data {
			if math.Abs(x) > Huge && !math.IsInf(x, 0) {
				return true
			}
		}
	}
	var cfg any
	json.Unmarshal(s.manifest.Config, &cfg)
	return hugeJSON(cfg)
}

func hugeJSON(v any) bool {
	switch v := v.(type) {
	case float64:
		return math.Abs(v) > Huge
	case []any:
		return slices.ContainsFunc(v, hugeJSON)
	case map[string]any:
		for _, x := range v {
			if hugeJSON(x) {
				return true
			}
		}
	}
	return false
}

// check reports what is wrong with o, the outcome of loading raw, a model
// damaged as what says; base is the undamaged file's allocation. When huge,
// the model holds a value above Huge, and scores need not be finite.
func check(tb testing.TB, what string, raw []byte, o outcome, base uint64, huge bool) {
	tb.Helper()
	if o.panic != nil {
		tb.Errorf("%s: panicked: %v\n%s", what, o.panic, o.stack)
		return
	}
	// Loading may allocate what the file holds several times over, and
	// what the good model needed, but no more: a size the file claims and
	// does not hold must not be allocated.
	if limit := 4*base + 64*uint64(len(raw)) + 16<<20; o.alloc > limit {
		tb.Errorf("%s: loading allocated %d MiB for a %d-byte file (the intact model: %d MiB)", what, o.alloc>>20, len(raw), base>>20)
	}
	if o.err != nil {
		if !strings.Contains(o.err.Error(), FileName) {
			tb.Errorf("%s: error %q does not name the file", what, o.err)
		}
		return
	}
	for i, v := range o.scores {
		if (math.IsNaN(v) || math.IsInf(v, 0)) && !huge {
			tb.Errorf("%s: loaded, then scored input %d %v", what, i, v)
			return
		}
	}
}

// Corruptions checks a model package's loader against damaged copies of
// saved, a model file the package saved: each tensor given NaN, infinite,
// negative, fractional and huge values, other shapes, or dropped; each
// string list shortened, extended, given a duplicate or an empty string;
// sections swapped; each config field removed or set to values out of
// range. Loading must never panic or allocate far beyond what the file
// holds; an error must name the file; a model that loads must score the
// small input load scores with finite numbers, unless it holds a value
// above Huge.
func Corruptions(t *testing.T, saved []byte, load LoadScore) {
	t.Helper()
	base := try(load, saved)
	if base.panic != nil || base.err != nil {
		t.Fatalf("the intact model does not load: %v %v", base.err, base.panic)
	}
	check(t, "intact model", saved, base, base.alloc, false)
	if len(base.scores) == 0 {
		t.Fatal("the intact model scored nothing")
	}
	accepted := 0
	ms := mutations(parse(t, saved))
	for _, m := range ms {
		var buf bytes.Buffer
		if _, err := m.b.WriteTo(&buf); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		o := try(load, buf.Bytes())
		check(t, m.name, buf.Bytes(), o, base.alloc, m.huge)
		if o.err == nil && o.panic == nil {
			accepted++
			t.Logf("loaded: %s", m.name)
		}
	}
	t.Logf("%d damaged copies, %d loaded and scored", len(ms), accepted)
}

// Fuzz runs a fuzz target that applies a program of edits, read from the
// fuzz input, to saved, a model file the package saved, and checks the
// result as Corruptions does.
func Fuzz(f *testing.F, saved []byte, load LoadScore) {
	f.Helper()
	base := try(load, saved)
	if base.panic != nil || base.err != nil {
		f.Fatalf("the intact model does not load: %v %v", base.err, base.panic)
	}
	s := parse(f, saved)
	f.Add([]byte{})
	for op := range byte(numOps) {
		for sel := range byte(4) {
			f.Add([]byte{op, sel, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
			f.Add([]byte{op, sel, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x42})
		}
	}
	f.Fuzz(func(t *testing.T, prog []byte) {
		c := s.clone()
		what := edit(c, prog)
		var buf bytes.Buffer
		if _, err := c.bundle().WriteTo(&buf); err != nil {
			t.Skip(err) // a config edit that does not marshal
		}
		check(t, what, buf.Bytes(), try(load, buf.Bytes()), base.alloc, c.hasHuge())
	})
}

const numOps = 8

// edit applies the program prog to s and describes what it did. Each
// instruction is an op byte, a selector byte and two 8-byte arguments
// (missing bytes read as zero).
func edit(s *sections, prog []byte) string {
	var did []string
	u64 := func() uint64 {
		var b [8]byte
		n := copy(b[:], prog)
		prog = prog[n:]
		return binary.LittleEndian.Uint64(b[:])
	}
	for len(prog) >= 2 {
		op, sel := prog[0]%numOps, int(prog[1])
		prog = prog[2:]
		a, b := u64(), u64()
		tn, sn := s.tensorNames(), s.stringNames()
		switch op {
		case 0, 1: // set a tensor value
			if len(tn) == 0 {
				continue
			}
			n := tn[sel%len(tn)]
			t := s.tensors[n]
			if len(t.Data) == 0 {
				continue
			}
			v := math.Float64frombits(b)
			if op == 1 { // an integer, as counts, ids and offsets are
				v = float64(int64(b))
			}
			i := int(a % uint64(len(t.Data)))
			t.Data[i] = v
			did = append(did, fmt.Sprintf("tensor %q value %d set to %g", n, i, v))
		case 2: // resize a tensor's dimension
			if len(tn) == 0 {
				continue
			}
			n := tn[sel%len(tn)]
			t := s.tensors[n]
			if len(t.Shape) == 0 {
				continue
			}
			d := int(a % uint64(len(t.Shape)))
			shape := slices.Clone(t.Shape)
			shape[d] = int(b % uint64(2*shape[d]+3))
			data := make([]float64, size(shape))
			copy(data, t.Data)
			s.tensors[n] = models.Tensor{Shape: shape, Data: data}
			did = append(did, fmt.Sprintf("tensor %q shape %v", n, shape))
		case 3: // reshape a tensor, keeping its values
			if len(tn) == 0 {
				continue
			}
			n := tn[sel%len(tn)]
			t := s.tensors[n]
			var shape []int
			switch {
			case a%3 == 0:
				shape = []int{len(t.Data)}
			case a%3 == 1:
				shape = append([]int{1}, t.Shape...)
			case len(t.Shape) == 2:
				shape = []int{t.Shape[1], t.Shape[0]}
			default:
				continue
			}
			s.tensors[n] = models.Tensor{Shape: shape, Data: t.Data}
			did = append(did, fmt.Sprintf("tensor %q reshaped to %v", n, shape))
		case 4: // drop or swap sections
			all := append(slices.Clone(tn), sn...)
			if len(all) == 0 {
				continue
			}
			x := all[sel%len(all)]
			if a%2 == 0 {
				delete(s.tensors, x)
				delete(s.strs, x)
				did = append(did, fmt.Sprintf("section %q dropped", x))
				continue
			}
			y := all[int(b%uint64(len(all)))]
			if _, ok := s.tensors[x]; ok {
				if _, ok := s.tensors[y]; ok {
					s.tensors[x], s.tensors[y] = s.tensors[y], s.tensors[x]
					did = append(did, fmt.Sprintf("tensors %q and %q swapped", x, y))
				}
			} else if _, ok := s.strs[y]; ok {
				s.strs[x], s.strs[y] = s.strs[y], s.strs[x]
				did = append(did, fmt.Sprintf("strings %q and %q swapped", x, y))
			}
		case 5: // edit a string list
			if len(sn) == 0 {
				continue
			}
			n := sn[sel%len(sn)]
			l := s.strs[n]
			switch {
			case a%4 == 0 || len(l) == 0:
				s.strs[n] = append(l, fmt.Sprintf("zz%d", b%8))
				did = append(did, fmt.Sprintf("strings %q extended", n))
			case a%4 == 1:
				s.strs[n] = l[:int(b%uint64(len(l)))]
				did = append(did, fmt.Sprintf("strings %q cut to %d", n, len(s.strs[n])))
			case a%4 == 2:
				i, j := int((a>>8)%uint64(len(l))), int(b%uint64(len(l)))
				l[i] = l[j]
				did = append(did, fmt.Sprintf("strings %q: %d set to %d", n, i, j))
			default:
				i := int(b % uint64(len(l)))
				l[i] = ""
				did = append(did, fmt.Sprintf("strings %q: %d blanked", n, i))
			}
		case 6: // set a config field
			var c map[string]json.RawMessage
			if json.Unmarshal(s.manifest.Config, &c) != nil || len(c) == 0 {
				continue
			}
			keys := sortedKeys(c)
			k := keys[sel%len(keys)]
			var v string
			switch a % 4 {
			case 0:
				v = fmt.Sprint(int64(b))
			case 1:
				f := math.Float64frombits(b)
				if math.IsNaN(f) || math.IsInf(f, 0) {
					continue
				}
				v = fmt.Sprint(f)
			case 2:
				v = fmt.Sprintf("[%d]", int64(b))
			default:
				vs := []string{`""`, `"bogus"`, "true", "false", "null", "[]", "{}"}
				v = vs[b%uint64(len(vs))]
			}
			c[k] = json.RawMessage(v)
			s.manifest.Config, _ = json.Marshal(c)
			did = append(did, fmt.Sprintf("config %s set to %s", k, v))
		case 7: // clear the vocabulary hash
			s.manifest.VocabHash = ""
			did = append(did, "vocabulary hash cleared")
		}
	}
	if len(did) == 0 {
		return "intact model"
	}
	return strings.Join(did, "; ")
}
