package ssg

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/models/wmd"
)

// NeighboursMethod and NeighboursVersion identify a "wmd-neighbours"
// bundle.
const (
	NeighboursMethod  = "wmd-neighbours"
	NeighboursVersion = 1
)

// DefaultListSize is the neighbours a list holds unless told otherwise.
const DefaultListSize = 200

// Neighbours holds, for each document of a collection, its nearest
// documents by exact WMD in a word space, and the distance of the last:
// the list's radius, below which the list holds every document of the
// collection. A query graph's 2-hop searches run among the query's
// window, so a window document's nearest in the window are the nearest of
// those its list holds whenever it holds k of them, and every other
// window document is at least the radius away, a lower bound its search
// starts from (wmd.Options.Floor). The lists change which searches solve
// which transport problems, not what they find: the graph is the one the
// searches build without them.
//
// A document is known by its ID and the hash of its nBOW: one whose text
// or vocabulary changed since the lists were computed, or one added
// after, is searched as if no list knew it. UpdateNeighbours brings lists
// up to date with a collection that changed, searching only for the
// documents added or edited: each document's list then holds the
// generation it was computed in, and its radius bounds only the documents
// the lists knew, as they are now, in that generation.
type Neighbours struct {
	Config NeighboursConfig
	IDs    []string

	num    map[string]int32
	hashes []uint64
	gen    []int32   // the generation each document's list was computed in
	nb     []int32   // len(IDs)×Size, -1 where a list is shorter
	dist   []float64 // alongside nb
	radius []float64
}

// NeighboursConfig records how lists were computed.
type NeighboursConfig struct {
	// Size is the neighbours each list holds (fewer when the collection
	// has fewer other documents with a word that has a vector).
	Size int `json:"size"`
	// Vectors is the fingerprint of the word vectors (wmd.Space.Fingerprint):
	// distances in other vectors are other distances.
	Vectors string `json:"vectors"`
	// Generation counts the updates since the lists were first computed.
	Generation int32 `json:"generation"`
}

// docHash returns a hash of d's words and weights.
func docHash(d wmd.Doc) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for i, w := range d.Words {
		binary.LittleEndian.PutUint32(b[:4], uint32(w))
		h.Write(b[:4])
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(d.Weights[i]))
		h.Write(b[:])
	}
	return h.Sum64()
}

// BuildNeighbours computes the lists of size neighbours of the documents
// texts (named by ids) in a word space: one exact k-NN search over the
// whole collection for each, on every core, about as many transport
// problems as the lists hold. done, when set, is called with the number
// of documents searched so far, by one goroutine at a time.
func BuildNeighbours(ctx context.Context, space *wmd.Space, ids, texts []string, size int, done func(int)) (*Neighbours, error) {
	if size < 1 {
		return nil, fmt.Errorf("ssg: neighbour lists of %d documents: want ≥ 1", size)
	}
	n, docs, err := newNeighbours(space, ids, texts, NeighboursConfig{Size: size, Vectors: space.Fingerprint()})
	if err != nil {
		return nil, err
	}
	all := make([]int, len(docs))
	for a := range all {
		all[a] = a
	}
	return n, n.search(ctx, space, docs, all, done)
}

// UpdateNeighbours returns old brought up to date with the collection
// texts (named by ids), as it is now: the lists of documents old knows,
// unchanged, keep theirs, less the documents since deleted or edited; the
// documents added or edited since get lists searched over the whole
// collection, in a new generation. It returns how many it searched (done
// is called as for BuildNeighbours). Lists in other word vectors are
// refused: every distance would change.
func UpdateNeighbours(ctx context.Context, space *wmd.Space, old *Neighbours, ids, texts []string, done func(int)) (*Neighbours, int, error) {
	cfg := old.Config
	if got := space.Fingerprint(); cfg.Vectors != got {
		return nil, 0, fmt.Errorf("ssg: neighbour lists computed in other word vectors (fingerprint %s; these vectors' is %s): compute them anew", cfg.Vectors, got)
	}
	if cfg.Generation == math.MaxInt32 {
		return nil, 0, errors.New("ssg: neighbour lists updated too often; compute them anew")
	}
	cfg.Generation++
	n, docs, err := newNeighbours(space, ids, texts, cfg)
	if err != nil {
		return nil, 0, err
	}
	// Old numbers of the documents kept (same ID, same nBOW) → new ones.
	renum := make(map[int32]int32, len(docs))
	var todo []int
	for a := range docs {
		j, ok := old.num[ids[a]]
		if !ok || old.hashes[j] != n.hashes[a] {
			todo = append(todo, a)
			continue
		}
		renum[j] = int32(a)
	}
	S := cfg.Size
	for j, a := range renum {
		nb, dist, radius := old.List(int(j))
		n.gen[a], n.radius[a] = old.gen[j], radius
		k := 0
		for x, b := range nb {
			if c, ok := renum[b]; ok {
				n.nb[int(a)*S+k], n.dist[int(a)*S+k] = c, dist[x]
				k++
			}
		}
	}
	return n, len(todo), n.search(ctx, space, docs, todo, done)
}

// newNeighbours returns lists for the documents texts (named by ids),
// numbered in that order, with their nBOWs in space (whose fingerprint
// cfg holds): every list empty.
func newNeighbours(space *wmd.Space, ids, texts []string, cfg NeighboursConfig) (*Neighbours, []wmd.Doc, error) {
	if len(ids) != len(texts) {
		return nil, nil, fmt.Errorf("ssg: %d ids for %d texts", len(ids), len(texts))
	}
	n := &Neighbours{Config: cfg, IDs: ids}
	if err := n.index(); err != nil {
		return nil, nil, err
	}
	docs := make([]wmd.Doc, len(texts))
	n.hashes = make([]uint64, len(docs))
	for i, t := range texts {
		docs[i] = space.Doc(t) // as Model.Docs reads a pool document
		n.hashes[i] = docHash(docs[i])
	}
	n.gen = make([]int32, len(docs))
	n.nb = make([]int32, len(docs)*cfg.Size)
	for i := range n.nb {
		n.nb[i] = -1
	}
	n.dist = make([]float64, len(docs)*cfg.Size)
	n.radius = make([]float64, len(docs))
	return n, docs, nil
}

// search computes the lists of the documents which (numbers into docs,
// the collection) in the current generation: an exact k-NN search over
// the whole collection for each, on every core.
func (n *Neighbours) search(ctx context.Context, space *wmd.Space, docs []wmd.Doc, which []int, done func(int)) error {
	size := n.Config.Size
	idx := space.NewIndex(docs)
	var (
		mu       sync.Mutex // serialises done
		searched int
	)
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for _, a := range which {
		eg.Go(func() error {
			n.gen[a] = n.Config.Generation
			if !docs[a].Empty() {
				found, _, err := idx.KNN(ectx, docs[a], size, wmd.Options{Exclude: func(i int) bool { return i == a }})
				if err != nil {
					return err
				}
				for i, f := range found {
					n.nb[a*size+i], n.dist[a*size+i] = int32(f.Doc), f.Dist
				}
				n.radius[a] = math.MaxFloat64 // every other document listed
				if len(found) == size {
					n.radius[a] = found[size-1].Dist
				}
			}
			if done != nil {
				mu.Lock()
				searched++
				done(searched)
				mu.Unlock()
			}
			return nil
		})
	}
	return eg.Wait()
}

// index numbers n.IDs, refusing an ID given twice.
func (n *Neighbours) index() error {
	n.num = make(map[string]int32, len(n.IDs))
	for i, id := range n.IDs {
		if _, dup := n.num[id]; dup {
			return fmt.Errorf("ssg: document %q given twice", id)
		}
		n.num[id] = int32(i)
	}
	return nil
}

// Len returns the number of documents listed.
func (n *Neighbours) Len() int { return len(n.IDs) }

// List returns document i's neighbours (documents by number), nearest
// first, with their distances, and the list's radius.
func (n *Neighbours) List(i int) (nb []int32, dist []float64, radius float64) {
	s := n.Config.Size
	nb, dist = n.nb[i*s:(i+1)*s], n.dist[i*s:(i+1)*s]
	k := 0
	for k < len(nb) && nb[k] >= 0 {
		k++
	}
	return nb[:k], dist[:k], n.radius[i]
}

// lookup returns the number of the document id whose nBOW is d, or -1
// when the lists do not know it as that.
func (n *Neighbours) lookup(id string, d wmd.Doc) int32 {
	if i, ok := n.num[id]; ok && n.hashes[i] == docHash(d) {
		return i
	}
	return -1
}

// bounds reports whether document a's list bounds document b by its
// radius: whether b was known, as it is now, when a's list was computed.
func (n *Neighbours) bounds(a, b int32) bool { return n.gen[b] <= n.gen[a] }

// Save writes the lists as a "wmd-neighbours" bundle.
func (n *Neighbours) Save(path string) error {
	b := models.New(NeighboursMethod, NeighboursVersion)
	if err := b.SetConfig(n.Config); err != nil {
		return err
	}
	b.AddStrings("ids", n.IDs)
	hs := make([]string, len(n.hashes))
	for i, h := range n.hashes {
		hs[i] = strconv.FormatUint(h, 16)
	}
	b.AddStrings("hashes", hs)
	nb := make([]float64, len(n.nb))
	for i, x := range n.nb {
		nb[i] = float64(x)
	}
	N := len(n.IDs)
	b.AddTensor("neighbours", []int{N, n.Config.Size}, nb)
	b.AddTensor("distances", []int{N, n.Config.Size}, n.dist)
	b.AddTensor("radius", []int{N}, n.radius)
	gen := make([]float64, N)
	for i, g := range n.gen {
		gen[i] = float64(g)
	}
	b.AddTensor("generations", []int{N}, gen)
	return b.Save(path)
}

// LoadNeighbours reads a "wmd-neighbours" bundle.
func LoadNeighbours(path string) (*Neighbours, error) { return models.LoadWith(path, ReadNeighbours) }

// ReadNeighbours reads a "wmd-neighbours" bundle from r; name, the file r
// reads, is for errors.
func ReadNeighbours(r io.Reader, name string) (*Neighbours, error) {
	return models.ReadAs(r, name, NeighboursMethod, NeighboursVersion, neighboursFromBundle)
}

func neighboursFromBundle(b *models.Bundle) (*Neighbours, error) {
	n := &Neighbours{}
	if err := b.Config(&n.Config); err != nil {
		return nil, err
	}
	if n.Config.Size < 1 {
		return nil, fmt.Errorf("lists of %d documents, want ≥ 1", n.Config.Size)
	}
	if n.Config.Vectors == "" {
		return nil, errors.New("no word vectors' fingerprint")
	}
	var err error
	if n.IDs, err = b.Strings("ids"); err != nil {
		return nil, err
	}
	if err := n.index(); err != nil {
		return nil, err
	}
	hs, err := b.Strings("hashes")
	if err != nil {
		return nil, err
	}
	N, S := len(n.IDs), n.Config.Size
	if len(hs) != N {
		return nil, fmt.Errorf("%d hashes for %d documents", len(hs), N)
	}
	n.hashes = make([]uint64, N)
	for i, h := range hs {
		if n.hashes[i], err = strconv.ParseUint(h, 16, 64); err != nil {
			return nil, fmt.Errorf("hash of document %q: %v", n.IDs[i], err)
		}
	}
	lists, err := b.Tensor("neighbours", 2)
	if err != nil {
		return nil, err
	}
	dist, err := b.Tensor("distances", 2)
	if err != nil {
		return nil, err
	}
	radius, err := b.Tensor("radius", 1)
	if err != nil {
		return nil, err
	}
	for name, t := range map[string]models.Tensor{"neighbours": lists, "distances": dist} {
		if t.Shape[0] != N || t.Shape[1] != S {
			return nil, fmt.Errorf("%s has shape %v, want [%d %d]", name, t.Shape, N, S)
		}
	}
	if len(radius.Data) != N {
		return nil, fmt.Errorf("radius has %d values, want %d", len(radius.Data), N)
	}
	gen, err := b.Tensor("generations", 1)
	if err != nil {
		return nil, err
	}
	if len(gen.Data) != N {
		return nil, fmt.Errorf("generations has %d values, want %d", len(gen.Data), N)
	}
	if g := n.Config.Generation; g < 0 {
		return nil, fmt.Errorf("generation %d", g)
	}
	n.gen = make([]int32, N)
	for i, g := range gen.Data {
		if g != math.Trunc(g) || g < 0 || g > float64(n.Config.Generation) {
			return nil, fmt.Errorf("list of document %q: generation %v, want an integer in [0, %d]", n.IDs[i], g, n.Config.Generation)
		}
		n.gen[i] = int32(g)
	}
	n.nb, n.dist, n.radius = make([]int32, N*S), dist.Data, radius.Data
	seen := make([]int32, N) // a+1 where list a holds the document
	for a := range N {
		// A list: distinct other documents, nearest first, then -1s; its
		// radius at least its last distance.
		last, end := 0.0, false
		for k := range S {
			x, d := lists.Data[a*S+k], dist.Data[a*S+k]
			if x == -1 {
				end = true
				n.nb[a*S+k] = -1
				continue
			}
			if end || x != math.Trunc(x) || x < 0 || x >= float64(N) || int(x) == a || seen[int(x)] == int32(a)+1 {
				return nil, fmt.Errorf("list of document %q: entry %d is %v", n.IDs[a], k, x)
			}
			if !(d >= last) || math.IsInf(d, 1) {
				return nil, fmt.Errorf("list of document %q: distance %d is %v after %v", n.IDs[a], k, d, last)
			}
			seen[int(x)], last = int32(a)+1, d
			n.nb[a*S+k] = int32(x)
		}
		if r := n.radius[a]; !(r >= last) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("radius of document %q is %v, below its list's last distance %v", n.IDs[a], r, last)
		}
	}
	return n, nil
}
