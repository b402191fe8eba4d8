// Package unsupexp runs semrank's unsupervised reranking experiments (Word
// Mover's Distance and the soft-seeded SSL graphs of Srivastava & Datt,
// 2017) against lexical baselines, and the WMD speed comparison. It uses
// no relevance judgments except to score the final rankings.
package unsupexp
