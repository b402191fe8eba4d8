package index

import (
	"encoding/json"
	"testing"
)

// BenchmarkStoredMeta decodes a SemEval comment's metadata as stages read
// it (StoredMeta), beside encoding/json's decoding of the same JSON.
func BenchmarkStoredMeta(b *testing.B) {
	raw := "{\"by_question_author\": false, \"category\": \"Working in Qatar\", \"date\": \"2015-01-07 10:31:45\", \"position\": 1, \"question_date\": \"2015-01-07 10:00:25\", \"question_id\": \"Q201_R26\", \"question_user_id\": \"U4433\", \"thread_size\": 10, \"user_id\": \"U4434\", \"user_name\": \"aamirjaved\"}"
	b.Run("StoredMeta", func(b *testing.B) {
		fields := map[string]any{FieldMeta: raw}
		for b.Loop() {
			if len(StoredMeta(fields)) == 0 {
				b.Fatal("no metadata")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal([]byte(raw), &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
