package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Fingerprint identifies the judged data of a dataset: its query ids and
// judgments. Models record it so a result can be traced to its training
// data and a fold that leaks into its own training set can be detected.
func (ds *Dataset) Fingerprint() string {
	h := sha256.New()
	for _, q := range ds.Queries {
		fmt.Fprintf(h, "q %s\n", q.ID)
	}
	for _, qid := range SortedKeys(ds.Qrels) {
		for _, did := range SortedKeys(ds.Qrels[qid]) {
			fmt.Fprintf(h, "r %s %s %d\n", qid, did, ds.Qrels[qid][did])
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
