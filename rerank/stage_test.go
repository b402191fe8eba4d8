package rerank

import (
	"reflect"
	"testing"
)

func TestStageSpecRelativeTo(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  string
		in   StageSpec
		want StageSpec
	}{
		{"model and topics inside dir", "/x/out",
			StageSpec{Type: "ssg", Model: "/x/out/models/v.embed", Options: map[string]any{"topics": "/x/out/models/t.topics", "k": 10}},
			StageSpec{Type: "ssg", Model: "models/v.embed", Options: map[string]any{"topics": "models/t.topics", "k": 10}}},
		{"relative dir", "out/r",
			StageSpec{Type: "ssg", Model: "out/r/models/v.embed", Options: map[string]any{"topics": "out/r/models/t.topics"}},
			StageSpec{Type: "ssg", Model: "models/v.embed", Options: map[string]any{"topics": "models/t.topics"}}},
		{"option outside dir kept", "/x/out",
			StageSpec{Type: "ssg", Options: map[string]any{"topics": "/elsewhere/t.topics"}},
			StageSpec{Type: "ssg", Options: map[string]any{"topics": "/elsewhere/t.topics"}}},
		{"plain strings kept", "out/r",
			StageSpec{Type: "meta", Options: map[string]any{"field": "position", "transform": "neglog"}},
			StageSpec{Type: "meta", Options: map[string]any{"field": "position", "transform": "neglog"}}},
		{"no model, no options", "out", StageSpec{Type: "tfidf"}, StageSpec{Type: "tfidf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := tc.in.Options["topics"]
			got := tc.in.RelativeTo(tc.dir)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if tc.in.Options["topics"] != orig {
				t.Fatal("RelativeTo changed the caller's options map")
			}
		})
	}
}
