package rerank

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/internal/atomicfile"
	"github.com/semrank/semrank/internal/regfile"
)

// Config is a pipeline file: a small YAML (or JSON, which YAML accepts)
// document naming the window, the stages and the fusion.
//
//	window: 100
//	first_stage:
//	  query_boost: tweak      # optional: boost first-stage terms by a stage's query weights
//	stages:
//	  - type: tfidf
//	  - type: tweak
//	    model: tweak.model    # relative to the pipeline file
//	fusion:
//	  method: linear          # linear | lambdamart | rrf | none
//	  model: fusion.model     # learned weights (semrank train fusion), or:
//	  weights: {first_rank: 1, tweak: 0.5}
//	  regularize: {k: 10, alpha: 0.5}  # optional: smooth the fused scores
//	sha256:                   # optional: refuse models changed since
//	  tweak.model: 9f86d0…    # (64 hex digits, as sha256sum prints)
//
// Building refuses what a typo would otherwise silently drop: stage
// options the stage type does not know (see NewStage), fusion weights
// for stages the pipeline lacks, fusion settings the method does not read
// (a model for rrf, weights for lambdamart, both for linear) and fusion
// weights that are not finite; and stage names the fusion could not tell
// apart: two stages of one name, a first-stage feature's name
// (first_score, first_rank, given_rank) and one starting "raw:", which
// names LambdaMART's raw features. Parsing refuses unknown keys and a
// second YAML document in the file. Values naming data are not checked: a
// meta stage's field, a metadata key, may be absent from every document.
// Files listed under sha256 must hold the content listed (see Checksums).
//
// Without a fusion section, or with method linear and neither model nor
// weights, the fusion is linear with weight 1 on every stage and on
// first_rank (see FusionSpec).
type Config struct {
	Window int `yaml:"window,omitempty" json:"window,omitempty"`
	// Fields names the stored fields stages read as a candidate's title
	// and text; by default semrank's own.
	Fields     Fields      `yaml:"fields,omitempty" json:"fields,omitempty"`
	FirstStage FirstStage  `yaml:"first_stage,omitempty" json:"first_stage,omitempty"`
	Stages     []StageSpec `yaml:"stages" json:"stages"`
	Fusion     FusionSpec  `yaml:"fusion,omitempty" json:"fusion,omitempty"`
	// Checksums maps files the pipeline reads (relative to the pipeline
	// file, slash-separated) to their SHA-256, hex; Build refuses a
	// listed file whose content differs. Recipes list every model they
	// publish (package rerank/publish writes them).
	Checksums map[string]string `yaml:"sha256,omitempty" json:"sha256,omitempty"`
}

// FirstStage configures the Bleve query that produces candidates.
type FirstStage struct {
	// QueryBoost names a stage whose learned query term weights become
	// term boosts of the first-stage query (the stage must implement
	// QueryWeighter).
	QueryBoost string `yaml:"query_boost,omitempty" json:"query_boost,omitempty"`
	// Fields, when set, are the fields a search from text matches (each
	// with its own analyzer); by default a semrank index's title and text
	// together, and another index's default search field (_all in a
	// default mapping), as a Bleve application's match query would.
	Fields FieldList `yaml:"fields,omitempty" json:"fields,omitempty"`
	// Feedback, when set, retrieves the window by the query expanded
	// with pseudo-relevance feedback from the first stage's top
	// documents (see Feedback); every search from text or request gets
	// it.
	Feedback *Feedback `yaml:"feedback,omitempty" json:"feedback,omitempty"`
}

// FusionSpec configures the fusion of stage scores.
//
// Method linear, the default, is a Linear fusion: a weighted sum of the
// features of Features, each z-normalised per query. Its weights come from
// Model (a file semrank train fusion writes) or Weights; with neither, every
// stage and the first-stage rank feature (FeatureFirstRank, first_rank)
// weigh 1 and the first-stage score (first_score) 0. Method lambdamart needs
// a Model; rrf is reciprocal rank fusion with constant K (default 60),
// Weights optional; none keeps the first-stage order.
//
// Regularize, when present (even empty, {}), smooths the fused scores
// (the first stage's, with method none) over the window: the regularize
// stage, Diaz's score regularization, given them in place of the first
// stage's, becomes the pipeline's Smooth step. Its options are the
// stage's, k (default 10) and alpha (default 0.5). Without it the fused
// scores are the hits' scores.
type FusionSpec struct {
	Method     string             `yaml:"method,omitempty" json:"method,omitempty"` // linear (default), lambdamart, rrf, none
	Model      string             `yaml:"model,omitempty" json:"model,omitempty"`
	Weights    map[string]float64 `yaml:"weights,omitempty" json:"weights,omitempty"`
	K          float64            `yaml:"k,omitempty" json:"k,omitempty"` // RRF constant
	Regularize *map[string]any    `yaml:"regularize,omitempty" json:"regularize,omitempty"`
}

// MarshalYAML writes f with the floats of its regularize options kept
// floats, as StageSpec.MarshalYAML keeps a stage's.
func (f FusionSpec) MarshalYAML() (any, error) {
	type plain FusionSpec // without this method
	out := plain(f)
	if f.Regularize != nil {
		opts := keepFloats(*f.Regularize).(map[string]any)
		out.Regularize = &opts
	}
	return out, nil
}

// SmoothName is the name of the Smooth step that a pipeline file's
// fusion.regularize builds, in errors and in Pipeline.Observe.
const SmoothName = "fusion.regularize"

// smoothStage builds the Smooth step f.Regularize describes; nil without
// one.
func (f FusionSpec) smoothStage(env Env) (Stage, error) {
	if f.Regularize == nil {
		return nil, nil
	}
	return NewStage(StageSpec{Type: "regularize", Name: SmoothName, Options: *f.Regularize}, env)
}

// QueryWeighter is implemented by stages that learn query term weights
// (TWEAK), which the first stage can use as term boosts.
type QueryWeighter interface {
	QueryWeights(text string) map[string]float64
}

// MaxConfigSize bounds a pipeline file: one is a few hundred bytes, and
// a path naming something else (a model, a device) is refused before it
// is read whole.
const MaxConfigSize = 16 << 20

// ReadConfig reads a pipeline file; see ParseConfig. The path must name a
// regular file of at most MaxConfigSize bytes: a FIFO or a device is
// refused without being read.
func ReadConfig(path string) (*Config, error) {
	raw, err := regfile.ReadFile(path, MaxConfigSize)
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: %w", path, err)
	}
	return c, nil
}

// ParseConfig parses a pipeline document, refusing unknown keys so a typo
// is an error, not a silently ignored setting, a second YAML document,
// which would be ignored too, and a negative window, which would otherwise
// mean the default.
func ParseConfig(raw []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty pipeline document")
		}
		return nil, unknownKeys(err)
	}
	// Further documents would be silently ignored: refuse them, unless
	// they are empty (a trailing "---").
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !emptyDocument(&next) {
			return nil, fmt.Errorf("line %d: a second YAML document; a pipeline file holds one", next.Line)
		}
	}
	// yaml.v3 truncates a number with a fraction into an int field.
	var w struct {
		Window any `yaml:"window"`
	}
	if yaml.Unmarshal(raw, &w) == nil {
		if f, ok := w.Window.(float64); ok && f != math.Trunc(f) {
			return nil, fmt.Errorf("window %v: want a whole number of candidates", f)
		}
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// emptyDocument reports whether n, a decoded document, holds nothing but
// null.
func emptyDocument(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	return n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// check refuses what no pipeline means, however the Config was made: a
// negative window, which would otherwise mean the default, no stages but
// for fusion none, a stage without a type, and a listed checksum that is
// no SHA-256 digest.
func (c *Config) check() error {
	if c.Window < 0 {
		return fmt.Errorf("window %d is negative (0 means the default, %d)", c.Window, DefaultWindow)
	}
	if len(c.Stages) == 0 && !strings.EqualFold(c.Fusion.Method, "none") {
		return errors.New("no stages")
	}
	for i, s := range c.Stages {
		if s.Type == "" {
			return fmt.Errorf("stage %d has no type", i+1)
		}
	}
	if err := c.Fields.check(); err != nil {
		return err
	}
	for _, f := range c.FirstStage.Fields {
		if strings.TrimSpace(f) == "" {
			return errors.New("first_stage.fields: an empty field name")
		}
	}
	if f := c.FirstStage.Feedback; f != nil {
		if c.FirstStage.QueryBoost != "" {
			return errFeedbackBoost
		}
		if err := f.check(); err != nil {
			return err
		}
	}
	return c.checkChecksums()
}

// unknownKey matches yaml.v3's report of a key no field takes.
var unknownKey = regexp.MustCompile(`field (.+) not found in type rerank\.(\w+)`)

// pipelineParts names the pipeline document's parts for error messages,
// with the keys each takes.
var pipelineParts = map[string]struct {
	part string
	t    reflect.Type
}{
	"Config":     {"the pipeline", reflect.TypeFor[Config]()},
	"StageSpec":  {"a stage", reflect.TypeFor[StageSpec]()},
	"FusionSpec": {"fusion", reflect.TypeFor[FusionSpec]()},
	"FirstStage": {"first_stage", reflect.TypeFor[FirstStage]()},
	"Fields":     {"fields", reflect.TypeFor[Fields]()},
	"Feedback":   {"first_stage.feedback", reflect.TypeFor[Feedback]()},
}

// unknownKeys rewrites yaml.v3's "field modle not found in type
// rerank.StageSpec", which names Go types, into what a pipeline's author
// can act on: the key, where it was, and the keys that part takes.
func unknownKeys(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		msgs[i] = unknownKey.ReplaceAllStringFunc(m, func(s string) string {
			sub := unknownKey.FindStringSubmatch(s)
			p, ok := pipelineParts[sub[2]]
			if !ok {
				return s
			}
			var keys []string
			for f := range p.t.Fields() {
				if k, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); k != "" && k != "-" {
					keys = append(keys, k)
				}
			}
			return fmt.Sprintf("unknown key %q in %s (keys: %s)", sub[1], p.part, strings.Join(keys, ", "))
		})
	}
	return errors.New(strings.Join(msgs, "; "))
}

// MarshalYAML writes s with every float option kept a float: yaml.v3
// writes a whole float64 as an integer ("08" and "8.0" both read as 8.0,
// and are written 8), which reads back as an int, so a pipeline written by
// WriteConfig would not be the one read. Floats inside lists and maps,
// and as map keys, are kept too.
func (s StageSpec) MarshalYAML() (any, error) {
	type plain StageSpec // without this method
	out := plain(s)
	if len(s.Options) > 0 {
		out.Options = make(map[string]any, len(s.Options))
		for k, v := range s.Options {
			out.Options[k] = keepFloats(v)
		}
	}
	return out, nil
}

// yamlFloat is a float64 that yaml.v3 writes in a form that reads back as
// a float (see StageSpec.MarshalYAML).
type yamlFloat float64

func (f yamlFloat) MarshalYAML() (any, error) {
	v := float64(f)
	s := strconv.FormatFloat(v, 'g', -1, 64)
	switch {
	case math.IsInf(v, 1):
		s = ".inf"
	case math.IsInf(v, -1):
		s = "-.inf"
	case math.IsNaN(v):
		s = ".nan"
	case !strings.ContainsAny(s, ".e"):
		s += ".0"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: s}, nil
}

// keepFloats returns v, a value decoded from YAML, with its float64s,
// however deep in lists and maps, made yamlFloats.
func keepFloats(v any) any {
	switch v := v.(type) {
	case float64:
		return yamlFloat(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = keepFloats(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = keepFloats(e)
		}
		return out
	case map[any]any:
		out := make(map[any]any, len(v))
		for k, e := range v {
			out[keepFloats(k)] = keepFloats(e)
		}
		return out
	}
	return v
}

// WriteConfig writes c as YAML.
func WriteConfig(path string, c *Config) error {
	raw, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(raw)
		return err
	})
}

// Build constructs the pipeline c describes. Relative model paths resolve
// against env.Dir.
func (c *Config) Build(env Env) (*Pipeline, error) {
	env.verified = nil
	env.shared = &sharedLoads{m: map[any]any{}}
	if len(c.Checksums) > 0 {
		// Before any load, and the loads parse what was checked (see
		// LoadModel).
		v, err := c.readVerified(env.Dir)
		if err != nil {
			return nil, err
		}
		env.verified = v
	}
	p, err := c.build(env)
	// The listed files no factory read through LoadModel, after every
	// load; and when the build failed, a listed file that changed is the
	// likelier cause (a model of another pipeline met mid-publish), and
	// the error to act on.
	cerr := c.verifyChecksums(env.Dir, env.verified)
	if env.verified != nil {
		env.verified.release()
	}
	if cerr != nil {
		if err != nil {
			return nil, fmt.Errorf("%w (building it failed too: %v)", cerr, err)
		}
		return nil, cerr
	}
	return p, err
}

func (c *Config) build(env Env) (*Pipeline, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	env, err := env.forFields(c.Fields, len(c.Stages) > 0 || c.FirstStage.Feedback != nil || c.Fusion.Regularize != nil)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	p := &Pipeline{Window: c.Window, Fields: c.Fields.resolved()}
	p.prepare, _ = env.Stats.(Preparer)
	p.fetch, _ = env.Payloads.(PayloadFetcher)
	names := map[string]bool{}
	for _, spec := range c.Stages {
		st, err := NewStage(spec, env)
		if err != nil {
			return nil, err
		}
		if spec.Name != "" {
			st = renamed{Stage: st, name: spec.Name}
		}
		if names[st.Name()] {
			return nil, fmt.Errorf("pipeline: two stages named %q; give one a name", st.Name())
		}
		switch st.Name() {
		case FeatureFirstScore, FeatureFirstRank, FeatureGivenRank:
			// The fusion would read one weight for two features.
			return nil, fmt.Errorf("pipeline: stage name %q is a first-stage fusion feature; give the stage another name", st.Name())
		}
		if strings.HasPrefix(st.Name(), rawPrefix) {
			// LambdaMART names its raw features so (TreeFeatures): a
			// stage "raw:first_rank" would share a tree feature's name.
			return nil, fmt.Errorf("pipeline: stage name %q: the prefix %q names the boosted trees' raw features; give the stage another name", st.Name(), rawPrefix)
		}
		names[st.Name()] = true
		p.Stages = append(p.Stages, st)
	}
	p.costs = make([]atomic.Int64, len(p.Stages))
	if err := c.Fusion.checkSettings(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	switch strings.ToLower(c.Fusion.Method) {
	case "", "linear":
		switch {
		case c.Fusion.Model != "":
			l, err := LoadModel(env, Resolve(env.Dir, c.Fusion.Model), ReadLinear)
			if err != nil {
				return nil, err
			}
			p.Fusion = l
		case len(c.Fusion.Weights) > 0:
			p.Fusion = &Linear{Weights: c.Fusion.Weights}
		default:
			p.Fusion = &Linear{Weights: p.equalWeights()}
		}
	case "lambdamart":
		if c.Fusion.Model == "" {
			return nil, fmt.Errorf("pipeline: %w", &NeedsModelError{Type: "fusion lambdamart"})
		}
		m, err := LoadModel(env, Resolve(env.Dir, c.Fusion.Model), ReadLambdaMART)
		if err != nil {
			return nil, err
		}
		p.Fusion = m
	case "rrf":
		p.Fusion = &RRF{K: c.Fusion.K, Weights: c.Fusion.Weights}
	case "agreement":
		w := c.Fusion.Weights
		if len(w) == 0 {
			w = p.equalWeights()
		}
		p.Fusion = &Agreement{Weights: w}
	case "none":
		p.Fusion = nil
	default:
		return nil, fmt.Errorf("pipeline: unknown fusion method %q (linear, agreement, lambdamart, rrf, none)", c.Fusion.Method)
	}
	if err := p.checkFusion(); err != nil {
		if c.Fusion.Model != "" {
			// The weights came from the model file: name it, since
			// the fix is usually to retrain it for these stages.
			return nil, fmt.Errorf("pipeline: fusion model %s: %w", Resolve(env.Dir, c.Fusion.Model), err)
		}
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if p.Smooth, err = c.Fusion.smoothStage(env); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	var qw QueryWeighter
	if name := c.FirstStage.QueryBoost; name != "" {
		st := p.stage(name)
		if st == nil {
			return nil, fmt.Errorf("pipeline: first_stage.query_boost names unknown stage %q", name)
		}
		var ok bool
		if qw, ok = unwrapStage(st).(QueryWeighter); !ok {
			return nil, fmt.Errorf("pipeline: first_stage.query_boost: stage %q has no query weights", name)
		}
	}
	if p.first, err = newFirstStage(env.Index, c.FirstStage.Fields, qw, env.Semrank); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if f := c.FirstStage.Feedback; f != nil {
		_, semrank := env.Index.(*index.Index)
		if p.feedback, err = newFeedback(*f, env, c.FirstStage.Fields, semrank || env.Semrank); err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
	}
	return p, nil
}

// checkSettings refuses fusion settings the method does not read, which
// building would otherwise silently drop: a model and weights together
// for linear (the model wins), a model for rrf, weights for lambdamart, a
// k for anything but rrf, and a negative k. Method none keeps whatever
// the document holds, so a fusion can be switched off and on again.
func (f FusionSpec) checkSettings() error {
	method := strings.ToLower(f.Method)
	if method == "none" {
		return nil
	}
	ignored := func(setting string) error {
		return fmt.Errorf("fusion method %s does not read %q; remove it", f.Method, setting)
	}
	switch method {
	case "", "linear":
		if f.Model != "" && len(f.Weights) > 0 {
			return errors.New("linear fusion with both a model and weights; give one of them")
		}
	case "rrf", "agreement":
		if f.Model != "" {
			return ignored("model")
		}
	case "lambdamart":
		if len(f.Weights) > 0 {
			return ignored("weights")
		}
	default:
		return nil // an unknown method: Build names it
	}
	if f.K != 0 && method != "rrf" {
		return ignored("k")
	}
	if !(f.K >= 0) || math.IsInf(f.K, 0) {
		return fmt.Errorf("fusion k %g: want a finite number, not negative (0 means the default, 60)", f.K)
	}
	return nil
}

// checkFusion fuses one dummy candidate, retrieved and then from a given
// candidate list, so that a fusion weighting a stage the pipeline lacks
// (a typo, a model trained with other stages), or one whose weights or
// constant are not finite (given_rank's included), is refused when the
// pipeline is built, not by every search.
func (p *Pipeline) checkFusion() error {
	if p.Fusion == nil {
		return nil
	}
	for _, given := range []int{0, 1} {
		in := FusionInput{Names: p.StageNames(), Candidates: []Candidate{{Rank: 1, GivenRank: given}}, Scores: make([][]float64, len(p.Stages))}
		for i := range in.Scores {
			in.Scores[i] = []float64{0}
		}
		out, err := p.Fusion.Fuse(in)
		if err != nil {
			return err
		}
		if err := checkFused(out, in.Candidates); err != nil {
			return fmt.Errorf("%w (are its weights finite?)", err)
		}
	}
	return nil
}

// LoadOption changes how LoadPipeline builds the pipeline.
type LoadOption func(*Config)

// StagesOnly makes LoadPipeline ignore the pipeline file's fusion, for learning a
// fusion of its stages. The fusion model is not loaded, so its checksum
// is not checked either: it may be the file being retrained.
func StagesOnly() LoadOption {
	return func(c *Config) {
		if c.Fusion.Model != "" {
			delete(c.Checksums, ChecksumKey(c.Fusion.Model))
		}
		c.Fusion = FusionSpec{Method: "none"}
	}
}

// LoadPipeline reads and builds a pipeline file; relative model paths
// resolve against the file's directory.
func LoadPipeline(path string, env Env, opts ...LoadOption) (*Pipeline, *Config, error) {
	c, err := ReadConfig(path)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range opts {
		o(c)
	}
	env.Dir = filepath.Dir(path)
	p, err := c.Build(env)
	if err != nil {
		return nil, nil, fmt.Errorf("pipeline %s: %w", path, err)
	}
	return p, c, nil
}

// Files returns the files c names, resolved against dir as Build resolves
// them: stage models, string options naming an existing regular file
// (such as an SSG stage's topics model), and with fusion the fusion
// model.
func (c *Config) Files(dir string, fusion bool) []string {
	var out []string
	add := func(p string) {
		if p != "" {
			out = append(out, Resolve(dir, p))
		}
	}
	for _, s := range c.Stages {
		add(s.Model)
		for _, v := range s.Options {
			if p, ok := v.(string); ok && p != "" {
				if st, err := os.Stat(Resolve(dir, p)); err == nil && st.Mode().IsRegular() {
					add(p)
				}
			}
		}
	}
	if fusion {
		add(c.Fusion.Model)
	}
	return out
}

// Resolve returns path resolved against dir unless it is absolute.
func Resolve(dir, path string) string {
	if path == "" || filepath.IsAbs(path) || dir == "" {
		return path
	}
	return filepath.Join(dir, path)
}

type renamed struct {
	Stage
	name string
}

func (r renamed) Name() string { return r.name }

func unwrapStage(s Stage) Stage {
	if r, ok := s.(renamed); ok {
		return r.Stage
	}
	return s
}

// Encoders returns the index-time payload encoders of the pipeline's
// stages (stages implementing PayloadStage), for indexing a corpus with
// the payloads the pipeline reads. A stage whose configuration needs no
// payload returns a nil encoder and is skipped.
func (p *Pipeline) Encoders() []PayloadEncoder {
	var out []PayloadEncoder
	for _, st := range p.Stages {
		if ps, ok := unwrapStage(st).(PayloadStage); ok {
			if e := ps.PayloadEncoder(); e != nil {
				out = append(out, e)
			}
		}
	}
	return out
}

// MissingPayloads returns the encoders of p's stages whose payloads store
// does not hold as written by their models: those stages compute the
// values from text at every query instead, several times slower.
func (p *Pipeline) MissingPayloads(store Payloads) []PayloadEncoder {
	var out []PayloadEncoder
	for _, e := range p.Encoders() {
		if store.PayloadModel(e.PayloadName()) != e.ModelID() {
			out = append(out, e)
		}
	}
	return out
}
