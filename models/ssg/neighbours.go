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
	"github.com/semrank/semrank/models/embed"
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
// after, is searched as if no list knew it.
type Neighbours struct {
	Config NeighboursConfig
	IDs    []string

	num    map[string]int32
	hashes []uint64
	nb     []int32   // len(IDs)×Size, -1 where a list is shorter
	dist   []float64 // alongside nb
	radius []float64
}

// NeighboursConfig records how lists were computed.
type NeighboursConfig struct {
	// Size is the neighbours each list holds (fewer when the collection
	// has fewer other documents with a word that has a vector).
	Size int `json:"size"`
	// Vectors is the fingerprint of the word vectors (VectorsFingerprint):
	// distances in other vectors are other distances.
	Vectors string `json:"vectors"`
}

// VectorsFingerprint returns a hash of v's words and vectors.
func VectorsFingerprint(v *embed.Vectors) string {
	h := fnv.New128a()
	var b [8]byte
	for i, w := range v.Words {
		h.Write([]byte(strconv.Itoa(len(w))))
		h.Write([]byte(w))
		for _, x := range v.Vector(i) {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
			h.Write(b[:])
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
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
	if len(ids) != len(texts) {
		return nil, fmt.Errorf("ssg: %d ids for %d texts", len(ids), len(texts))
	}
	if size < 1 {
		return nil, fmt.Errorf("ssg: neighbour lists of %d documents: want ≥ 1", size)
	}
	n := &Neighbours{Config: NeighboursConfig{Size: size, Vectors: VectorsFingerprint(space.Vectors())}, IDs: ids}
	if err := n.index(); err != nil {
		return nil, err
	}
	docs := make([]wmd.Doc, len(texts))
	for i, t := range texts {
		docs[i] = space.Doc(t) // as Model.Docs reads a pool document
	}
	n.hashes = make([]uint64, len(docs))
	for i, d := range docs {
		n.hashes[i] = docHash(d)
	}
	n.nb = make([]int32, len(docs)*size)
	n.dist = make([]float64, len(docs)*size)
	n.radius = make([]float64, len(docs))
	idx := space.NewIndex(docs)
	var (
		mu       sync.Mutex // serialises done
		searched int
	)
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for a := range docs {
		eg.Go(func() error {
			nb, dist := n.nb[a*size:(a+1)*size], n.dist[a*size:(a+1)*size]
			for i := range nb {
				nb[i], dist[i] = -1, 0
			}
			if !docs[a].Empty() {
				found, _, err := idx.KNN(ectx, docs[a], size, wmd.Options{Exclude: func(i int) bool { return i == a }})
				if err != nil {
					return err
				}
				for i, f := range found {
					nb[i], dist[i] = int32(f.Doc), f.Dist
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
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return n, nil
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
	n.nb, n.dist, n.radius = make([]int32, N*S), dist.Data, radius.Data
	for a := range N {
		// A list: distinct other documents, nearest first, then -1s; its
		// radius at least its last distance.
		seen := map[int32]bool{}
		last, end := 0.0, false
		for k := range S {
			x, d := lists.Data[a*S+k], dist.Data[a*S+k]
			if x == -1 {
				end = true
				n.nb[a*S+k] = -1
				continue
			}
			if end || x != math.Trunc(x) || x < 0 || x >= float64(N) || int(x) == a || seen[int32(x)] {
				return nil, fmt.Errorf("list of document %q: entry %d is %v", n.IDs[a], k, x)
			}
			if !(d >= last) || math.IsInf(d, 1) {
				return nil, fmt.Errorf("list of document %q: distance %d is %v after %v", n.IDs[a], k, d, last)
			}
			seen[int32(x)], last = true, d
			n.nb[a*S+k] = int32(x)
		}
		if r := n.radius[a]; !(r >= last) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("radius of document %q is %v, below its list's last distance %v", n.IDs[a], r, last)
		}
	}
	return n, nil
}
