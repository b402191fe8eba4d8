#!/usr/bin/env bash
# Reproduces the foundation numbers of docs/RESULTS.md: SemEval dev IR
# order, Bleve BM25 and TF-IDF cosine over the given candidates, and CACM
# full retrieval with Bleve BM25.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/data.sh >/dev/null
sr=out/semrank
O=out/data
R=out/foundation
rm -rf $R && mkdir -p $R
cat > $R/tfidf.yaml <<'YAML'
stages:
  - type: tfidf
fusion:
  method: linear
  weights: {tfidf: 1}
YAML
for s in B A; do
	echo "== SemEval-2016 subtask $s, dev"
	$sr index --data $O/$s-dev --index $R/$s-dev.idx >/dev/null
	$sr run --data $O/$s-dev --index $R/$s-dev.idx --out $R/$s-dev.bm25.trec >/dev/null
	$sr rerank --data $O/$s-dev --index $R/$s-dev.idx --pipeline $R/tfidf.yaml --out $R/$s-dev.tfidf.trec >/dev/null
	for run in $O/$s-dev/candidates.trec $R/$s-dev.bm25.trec $R/$s-dev.tfidf.trec; do
		echo "-- $run"
		$sr eval --qrels $O/$s-dev/qrels/test.tsv --run $run --metrics map@10,mrr@10,auc --baseline $O/$s-dev/candidates.trec
	done
done
echo "== CACM full retrieval, Bleve BM25 top-100"
$sr index --data $O/cacm --index $R/cacm.idx >/dev/null
$sr run --data $O/cacm --index $R/cacm.idx --depth 100 --out $R/cacm.bm25.trec >/dev/null
$sr eval --qrels $O/cacm/qrels/test.tsv --run $R/cacm.bm25.trec --metrics map,ndcg@10,p@10,r@100 --ignore-unjudged
