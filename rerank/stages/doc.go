// Package stages adapts semrank's models to rerank.Stage and registers each
// under a type name for pipeline files. Import it for its side effects:
//
//	import _ "github.com/semrank/semrank/rerank/stages"
//
// Each stage type lives in its own file.
package stages
