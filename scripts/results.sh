#!/usr/bin/env bash
# Reproduces the experiment numbers of docs/RESULTS.md, one section at a
# time: bash scripts/results.sh SECTION [SECTION ...], or "all".
#
# Sections: tweak, tweak-cacm, concepts-dev, concepts-cv, deepmatch-a, deepmatch-a-cv,
# deepmatch-b, deepmatch-b-cv, vectors, unsup-b, unsup-cacm, wmd-speed,
# recipe-b, recipe-a, heldout-a, heldout-b, fusion-ceiling, ablations, learning-curve, lambdamart, beir-cacm,
# beir-cacm-unsup, beir-cacm-d200, nojudge, selftrain-papers, ceiling-nojudge, nojudge-fixed, prf, prfguard, prfscope, proxreg, proxreg-cost, fusedreg, fusedreg-cost, agreement, agreement-supervised, agreement-a, agreement-plain, agreement-cost, agreement-glove, ppmi, ppmi-cost, ppmi-supervised, bench, plain-cacm, plain-cacm-supervised,
# plain-attach, plain-analyzer, plain-ideas, plain-recipe, query-boost, cost, cost-before, sum-cost, scale-bench, serve-load, split-cost, cost-lexical, cost-stages, cost-a, wmd-ssg-cost,
# solver-cost, neighbours, scale, serve, shards.
#
# Environment: SR (the semrank binary; built into out/semrank when unset),
# O (BEIR directories from scripts/data.sh; default out/data), XML (the
# SemEval XML directory; default ../shared/data/semeval2016-task3), R
# (outputs; default out/results), ABL (ablations to run; default all),
# DEVONLY (set: ablations on dev only, without their cross-validation),
# SCALE (the scale section's collections; default "cacm A-train 10k 100k"),
# SR_BEFORE (the cost-before, sum-cost, scale-bench, serve-load, split-cost, cost-lexical, cost-stages, cost-a, wmd-ssg-cost, solver-cost, scale and serve sections: another semrank binary, measured
# beside SR), WC and WC_BEFORE (cost-stages: examples/windowcost built from SR's and SR_BEFORE's trees), SERVECOST_BEFORE (the serve section: examples/servecost built
# with SR_BEFORE's tree),
# ROUNDS (the scale section's interleaved rounds; default 2; the shards,
# proxreg-cost, fusedreg-cost and agreement-cost sections', default 3), SHARDS (the shards section's collections; default cacm).
# CLASSIC (the classic collections; default ../shared/data/classic), PRF
# (the prf, prfguard and prfscope sections' collections; default "cacm B-all med lisa time adi",
# prfguard's and prfscope's "adi med cacm lisa B-all time"; both compare with prf's runs when
# those exist), GUARDRECIPE (prfguard: no skips the recipe over the guarded window), GLOVE
# (pre-trained vectors: nojudge-fixed's, agreement-glove's and selftrain-papers' default out/glove-wink-100d.txt;
# nojudge uses them only when set), PROX (the proxreg section's
# collections; default "adi med cacm lisa B-all time"), PROXFUSED (proxreg:
# no skips the recipe runs with wmd and ssg), PROXRUNS (proxreg: which of
# them), FUSEDREG and AGREE (the fusedreg and agreement sections' (and ppmi's)
# collections; default "adi med cacm lisa B-all time"), PPMISUP (the ppmi-supervised
# section's; default "time B-all"), NBR and NSIZE (the neighbours section's
# recipes, default "time", and CACM list sizes, default 200), SELFTRAIN and SELFRUNS
# (the selftrain-papers section's collections and runs), CEIL (the ceiling-nojudge section's collections) and CEILFITONLY (set: its in-sample fits alone, over
# the 5-fold runs already in $R/ceiling).
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-out/data}
XML=${XML:-../shared/data/semeval2016-task3}
R=${R:-out/results}
# The unsupervised recipe as it was before the agreement fusion became its
# default (the sections measured before it pass these flags, so that they
# reproduce their numbers): fixed equal weights, no step after the fusion.
EQUAL=(--fusion equal --after-fusion none)
if [ -z "${SR:-}" ]; then
	[ -d "$O" ] || bash scripts/data.sh >/dev/null
	go build -o out/semrank ./cmd/semrank
	SR=out/semrank
fi
mkdir -p "$R"
T2=$XML/SemEval2016-Task3-CQA-QL-train-part2.xml
DEV=$XML/SemEval2016-Task3-CQA-QL-dev.xml
E1=$XML/SemEval2015-Task3-CQA-QL-train-reformatted-excluding-2016-questions-cleansed.xml
E2=$XML/SemEval2015-Task3-CQA-QL-dev-reformatted-excluding-2016-questions-cleansed.xml

# vectors trains the word vectors and topic model the unsupervised
# experiments use: skip-gram on all SemEval question and comment text (the
# 2015 threads included; no labels), and on the CACM documents' text
# (abstracts and keywords).
# Each is made again when missing or older than the corpus it was made from
# (after scripts/data.sh converted the data anew).
vectors() {
	cacm_vectors
	fresh "$R/semeval.vec" "$O/A-train" "$O/A-dev" "$O/B-all" ||
		$SR train embed --data "$O/A-train" --data "$O/A-dev" --data "$O/B-all" --out "$R/semeval.vec"
	fresh "$R/semeval.topics" "$O/A-train" "$O/A-dev" "$O/B-all" ||
		$SR train topics --data "$O/A-train" --data "$O/A-dev" --data "$O/B-all" --topics 50 --out "$R/semeval.topics"
}

# cacm_vectors is vectors' CACM part: the word vectors, topic model and
# index of the cost sections.
cacm_vectors() {
	fresh "$R/cacm.vec" "$O/cacm" || $SR train embed --data "$O/cacm" --out "$R/cacm.vec"
	fresh "$R/cacm.topics" "$O/cacm" || $SR train topics --data "$O/cacm" --topics 50 --out "$R/cacm.topics"
	if ! fresh "$R/cacm.idx" "$O/cacm"; then
		rm -rf "$R/cacm.idx"
		$SR index --data "$O/cacm" --index "$R/cacm.idx" >/dev/null
	fi
}

# to FILE CMD... runs CMD with its standard output going to FILE, which
# it replaces only once CMD succeeds: a section that fails or is
# interrupted keeps the earlier FILE (and leaves FILE.part).
to() {
	local f=$1
	shift
	"$@" >"$f.part"
	mv "$f.part" "$f"
}

# feedback_recipe OUT D FEEDBACK runs the unsupervised recipe on the BEIR
# directory D with --feedback FEEDBACK into OUT (its report OUT.txt), and
# scores its run against BM25 (OUT.eval.txt) and, where the prf section
# has run, against its recipes over BM25's window and over BM25+RM3's
# ($R/prf/C-recipe, C-fb for D's collection C: OUT-vs-recipe.eval.txt,
# OUT-vs-fb.eval.txt).
feedback_recipe() {
	local out=$1 d=$2 fb=$3 c n
	c=$(basename "$d")
	rm -rf "$out"
	to "$out.txt" $SR experiment beir --data "$d" --unsupervised "${EQUAL[@]}" --feedback "$fb" --out "$out"
	to "$out.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$out/run.trec" --baseline "$out/baseline.trec" \
		--metrics map,ndcg@10 --ignore-unjudged
	for n in recipe fb; do
		[ -f "$R/prf/$c-$n/run.trec" ] || continue
		to "$out-vs-$n.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$out/run.trec" --baseline "$R/prf/$c-$n/run.trec" \
			--metrics map,ndcg@10 --ignore-unjudged
	done
}

# rerank_rounds OUT D DIR NAME... reranks the queries of the BEIR
# directory D over DIR/index with each pipeline DIR/NAME.yaml in turn
# (semrank rerank, its run to DIR/cost-NAME.trec), for ROUNDS rounds
# (default 3), and writes each run's wall seconds to OUT, a line "round R
# NAME SECONDS" each.
rerank_rounds() {
	local out=$1 d=$2 dir=$3 round n start
	shift 3
	: >"$out.part"
	for round in $(seq "${ROUNDS:-3}"); do
		for n in "$@"; do
			start=$(date +%s.%N)
			$SR rerank --data "$d" --index "$dir/index" --pipeline "$dir/$n.yaml" --out "$dir/cost-$n.trec" >/dev/null
			echo "round $round $n $(echo "$(date +%s.%N) - $start" | bc)" >>"$out.part"
		done
	done
	mv "$out.part" "$out"
	cat "$out"
}

# coldir C prints the BEIR directory of collection C: $O/C where
# scripts/data.sh converted it, else the classic collections' own.
coldir() {
	if [ -d "$O/$1" ]; then echo "$O/$1"; else echo "${CLASSIC:-../shared/data/classic}/$1"; fi
}

# compare_runs OUT D RUN BASE scores RUN against BASE on the judged
# queries of the BEIR directory D (OUT.eval.txt).
compare_runs() {
	to "$1.eval.txt" $SR eval --qrels "$2/qrels/test.tsv" --run "$3" --baseline "$4" --metrics map,ndcg@10 --ignore-unjudged
}

# scale_bench C... runs semrank bench of the serve section's pipeline over
# each collection C's serve index (10k, 100k, 1M; the serve section builds
# them) with SemEval B dev's questions, for SR_BEFORE and SR alternating,
# ROUNDS times (default 2).
scale_bench() {
	local S=$R/scale c r bin
	for c in "$@"; do
		for r in $(seq "${ROUNDS:-2}"); do
			for bin in "$SR_BEFORE" "$SR"; do
				printf '%s %s round %s  ' "$c" "$bin" "$r"
				$bin bench --index "$S/$c-serve.idx" --pipeline "$S/pipeline.yaml" --data "$O/B-dev" --rounds 2 2>&1 |
					grep -E "bare top|reranked \\(|ratio of medians" | paste -sd' '
			done
		done
	done
}

# serve_load C... serves each collection C's serve index (10k, 100k, 1M)
# with the serve section's pipeline (semrank serve), SR_BEFORE's server
# and SR's alternating, ROUNDS times (default 2), and loads each with
# semrank loadtest, SemEval B dev's questions reranked, from 1 and from 8
# clients for 20 s each.
serve_load() {
	local S=$R/scale c r bin pid url n
	for c in "$@"; do
		for r in $(seq "${ROUNDS:-2}"); do
			for bin in "$SR_BEFORE" "$SR"; do
				$bin serve --index "$S/$c-serve.idx" --pipeline "$S/pipeline.yaml" --addr 127.0.0.1:0 >"$S/load-serve.log" 2>&1 &
				pid=$!
				url=
				while [ -z "$url" ]; do
					sleep 0.3
					url=$(grep -o 'http://[0-9.:]*' "$S/load-serve.log" | head -1 || true)
				done
				for n in 1 8; do
					printf '%s %s round %s  ' "$c" "$bin" "$r"
					$bin loadtest --url "$url" --clients "$n" --duration 20s --rerank on --data "$O/B-dev" 2>&1 | tail -1
				done
				kill "$pid"
				wait "$pid" 2>/dev/null || true
			done
		done
	done
}

# recipe_run OUT D ARGS... runs semrank experiment beir on the BEIR
# directory D with ARGS into a fresh OUT (its report OUT.txt) and scores
# its run against its baseline (OUT.eval.txt).
recipe_run() {
	local out=$1 d=$2
	shift 2
	rm -rf "$out"
	to "$out.txt" $SR experiment beir --data "$d" "$@" --out "$out"
	compare_runs "$out" "$d" "$out/run.trec" "$out/baseline.trec"
}

# fusion_variant DIR D NAME OUT reranks D over the recipe in DIR (its
# index and models) with its pipeline.yaml's fusion replaced as NAME says
# (equalreg: fusion.regularize; agree: method agreement; both: the two;
# adaptive: fusion.regularize with adaptive: true; bothrm3: both, and an
# rm3 stage; lexical: equal weights on the first-stage rank, tfidf, bm25
# and length, wmd and ssg left out) into OUT.trec, writing that pipeline
# to DIR/NAME.yaml.
fusion_variant() {
	local dir=$1 d=$2 n=$3 out=$4 f
	case $n in
	equalreg) f='fusion:\n    regularize: {}\n' ;;
	agree) f='fusion:\n    method: agreement\n' ;;
	both | bothrm3) f='fusion:\n    method: agreement\n    regularize: {}\n' ;;
	adaptive) f='fusion:\n    regularize: {adaptive: true}\n' ;;
	lexical) f='fusion:\n    weights: {first_rank: 1, tfidf: 1, bm25: 1, length: 1}\n' ;;
	*)
		echo "fusion_variant: unknown variant $n" >&2
		return 2
		;;
	esac
	{
		if [ "$n" = bothrm3 ]; then
			awk '{ print } /^stages:/ { print "    - type: rm3" }' "$dir/pipeline.yaml"
		else
			cat "$dir/pipeline.yaml"
		fi
		printf "$f"
	} >"$dir/$n.yaml"
	$SR rerank --data "$d" --index "$dir/index" --pipeline "$dir/$n.yaml" --out "$out.trec" >/dev/null
}

# fresh OUT DIR... succeeds when OUT exists and is newer than the corpus of
# every BEIR directory DIR.
fresh() {
	local out=$1 d
	shift
	[ -e "$out" ] || return 1
	for d in "$@"; do
		[ "$out" -nt "$d/corpus.jsonl" ] || return 1
	done
}

# ABLATIONS are the stage sets compared in docs/RESULTS.md (name:stages;
# names starting with a are subtask A, with b subtask B).
ABLATIONS="b1:lexical,tweak b2:lexical,tweak,s2net b3:lexical,tweak,s2net,lsa b4:lexical,tweak,s2net,wmd,ssg
b5:lexical,tweak,s2net,dse b6:lexical,tweak,s2net,deepmatch b7:lexical,tweak,s2net,lsa,thread_text
b8:lexical,tweak,s2net,lsa,quality b9:lexical,tweak,s2net,lsa,titles b10:lexical,tweak,s2net,lsa,s2net:dim=100
b11:lexical,tweak,s2net:refit=true,lsa b12:lexical,tweak,s2net,lsa,peers
b13:lexical,tweak,s2net,lsa,bilinear:neg_random=3 b14:lexical,tweak,s2net,lsa,translation
a1:lexical,meta,tweak a2:lexical,meta,tweak,bilinear a3:lexical,meta,tweak,bilinear,deepmatch
a4:lexical,meta,tweak,bilinear,deepmatch,siamese a5:lexical,meta,tweak,bilinear,s2net,wmd
a6:lexical,meta,tweak,bilinear,quality a7:lexical,meta,tweak,bilinear,quality_context
a8:lexical,meta,tweak,bilinear,deepmatch,siamese,quality a9:lexical,meta,tweak,bilinear,quality_words
a10:lexical,meta,tweak,bilinear,deepmatch,siamese,quality,peers
a11:lexical,meta,tweak,bilinear,deepmatch,siamese,quality:l2=0.0001,peers a12:lexical,meta,tweak,bilinear,deepmatch,siamese,quality:l2=0.001,peers
a13:lexical,meta,peers,tweak,bilinear,bilinear:neg_random=3,deepmatch,siamese,quality
a14:lexical,meta,peers,tweak,bilinear:neg_random=3,deepmatch,siamese,quality
a15:lexical,meta,peers,tweak,bilinear:neg_random=3,deepmatch,siamese:neg_random=3,quality
a16:lexical,meta,peers,tweak,bilinear:neg_random=6,deepmatch,siamese,quality
a17:lexical,meta,peers,tweak,bilinear:neg_random=3,deepmatch:neg_random=3:neg_same=2,siamese,quality
a18:lexical,meta,peers,tweak,bilinear:neg_random=3:dim=64,deepmatch,siamese,quality
a19:lexical,meta,peers,tweak,bilinear:neg_random=3:neg_same=0,deepmatch,siamese,quality
a20:lexical,meta,peers,tweak,bilinear:neg_random=3,deepmatch,siamese,quality,translation
a21:lexical,meta,peers,tweak,bilinear:neg_random=3,deepmatch,siamese,quality,translation:beta=0.8
a22:lexical,meta,peers,tweak,bilinear:neg_random=3,deepmatch,siamese,quality,translation:beta=0.2"

run() {
	case "$1" in
	tweak)
		$SR experiment tweak --train "$O/B-train" --dev "$O/B-dev" --out "$R/tweak-dev.md"
		$SR experiment tweak --all "$O/B-all" --folds 5 --out "$R/tweak-cv.md"
		;;
	tweak-cacm)
		# The same protocol on CACM: each query's BM25 top 100 as its
		# candidate list, judged by CACM's relevant-only judgments.
		local c="$R/cacm-bm25"
		rm -rf "$c" "$c.idx"
		mkdir -p "$c"
		cp -r "$O/cacm/corpus.jsonl" "$O/cacm/queries.jsonl" "$O/cacm/qrels" "$c/"
		$SR index --data "$O/cacm" --index "$c.idx" >/dev/null
		$SR run --data "$O/cacm" --index "$c.idx" --depth 100 --out "$c/candidates.trec"
		$SR experiment tweak --all "$c" --folds 5 --out "$R/tweak-cacm-cv.md"
		;;
	concepts-dev)
		$SR experiment concepts --train "$O/B-train" --test "$O/B-dev" --corpus "$O/A-train" --tweak --out "$R/concepts-dev.md"
		;;
	concepts-cv)
		$SR experiment concepts --cv "$O/B-all" --folds 5 --corpus "$O/A-train" --tweak --out "$R/concepts-cv.md"
		;;
	deepmatch-a)
		to "$R/deepmatch-a.md" $SR experiment deepmatch --train "$O/A-train" --test "$O/A-dev"
		;;
	deepmatch-a-cv)
		to "$R/deepmatch-a-cv.md" $SR experiment deepmatch --cv "$O/A-all" --folds 5
		;;
	deepmatch-b)
		to "$R/deepmatch-b.md" $SR experiment deepmatch --train "$O/B-train" --test "$O/B-dev"
		;;
	deepmatch-b-cv)
		to "$R/deepmatch-b-cv.md" $SR experiment deepmatch --cv "$O/B-all" --folds 5
		;;
	vectors) vectors ;;
	unsup-b)
		vectors
		to "$R/unsup-b-dev.md" $SR experiment unsup --data "$O/B-dev" --vectors "$R/semeval.vec" --topics "$R/semeval.topics" --base "IR order"
		to "$R/unsup-b-all.md" $SR experiment unsup --data "$O/B-all" --vectors "$R/semeval.vec" --topics "$R/semeval.topics" --base "IR order"
		to "$R/unsup-b-all-vs-wmd.md" $SR experiment unsup --data "$O/B-all" --vectors "$R/semeval.vec" --topics "$R/semeval.topics" --base WMD
		;;
	unsup-cacm)
		vectors
		to "$R/unsup-cacm.md" $SR experiment unsup --data "$O/cacm" --index "$R/cacm.idx" --depth 100 --vectors "$R/cacm.vec" --topics "$R/cacm.topics" \
			--metrics map,ndcg@10,p@10,map@10 --base "IR order"
		to "$R/unsup-cacm-vs-wmd.md" $SR experiment unsup --data "$O/cacm" --index "$R/cacm.idx" --depth 100 --vectors "$R/cacm.vec" --topics "$R/cacm.topics" \
			--metrics map,ndcg@10,p@10,map@10 --base WMD
		;;
	wmd-speed)
		vectors
		to "$R/wmd-speed.txt" $SR experiment wmd-speed --data "$O/A-train" --vectors "$R/semeval.vec" --pairs-out "$R/wmd-pairs.bin"
		to "$R/wmd-pot.txt" /usr/bin/python3 scripts/wmd_reference.py --pairs "$R/wmd-pairs.bin" --values "$R/wmd-pot.bin"
		to "$R/wmd-speed-check.txt" $SR experiment wmd-speed --data "$O/A-train" --vectors "$R/semeval.vec" --pot-values "$R/wmd-pot.bin"
		;;
	recipe-b)
		$SR experiment semeval2016 --subtask B --train "$T2" --dev "$DEV" --out "$R/recipe-b" 2>&1 | tee "$R/recipe-b.txt"
		;;
	recipe-a)
		$SR experiment semeval2016 --subtask A --train "$T2" --train "$E1" --train "$E2" --dev "$DEV" --out "$R/recipe-a" 2>&1 | tee "$R/recipe-a.txt"
		;;
	ablations)
		# Stage sets of the SemEval recipe, on dev and by 5-fold CV over
		# train+dev (experiment beir --stages), as in docs/results/ablations.
		# ABL (space-separated names, e.g. "a6 b8") runs only those.
		mkdir -p "$R/ablations"
		local e name stages sub
		for e in $ABLATIONS; do
			name=${e%%:*} stages=${e#*:}
			[ -z "${ABL:-}" ] || [[ " $ABL " == *" $name "* ]] || continue
			if [[ $name == a* ]]; then
				sub=A
				to "$R/ablations/$name.dev.txt" $SR experiment semeval2016 --subtask A --train "$T2" --train "$E1" --train "$E2" --dev "$DEV" --train-only --stages "$stages" --out "$R/ablations/$name-dev"
			else
				sub=B
				to "$R/ablations/$name.dev.txt" $SR experiment semeval2016 --subtask B --train "$T2" --dev "$DEV" --train-only --stages "$stages" --out "$R/ablations/$name-dev"
			fi
			[ -z "${DEVONLY:-}" ] || continue
			rm -rf "$R/ablations/$name-cv" # experiment beir refuses to overwrite an index
			to "$R/ablations/$name.cv.txt" $SR experiment beir --data "$O/$sub-all" --stages "$stages" --out "$R/ablations/$name-cv"
		done
		;;
	heldout-a | heldout-b)
		# The held-out path on dev with its labels removed: convert the
		# unlabeled XML, rerank with the recipe's training-only pipeline
		# (the one behind its dev metrics), and compare with the recipe's
		# own dev run (after recipe-a or recipe-b). The held-out test goes
		# through the same commands with recipe-X/pipeline.yaml, trained on
		# train and dev.
		local st=${1#heldout-}
		local ST=${st^^}
		sed -E 's/(RELC_RELEVANCE2RELQ|RELC_RELEVANCE2ORGQ|RELQ_RELEVANCE2ORGQ)="[A-Za-z]*"/\1="?"/g' "$DEV" > "$R/dev-unlabeled.xml"
		rm -rf "$R/heldout-$st"
		$SR convert semeval2016 --xml "$R/dev-unlabeled.xml" --subtask "$ST" --out "$R/heldout-$st"
		$SR rerank --data "$R/heldout-$st" --pipeline "$R/recipe-$st/train/pipeline.yaml" --out "$R/heldout-$st.trec"
		cmp "$R/heldout-$st.trec" "$R/recipe-$st/dev.trec" && echo "held-out path: identical to the recipe's dev run"
		# The official scorer's prediction file, scored against the
		# task's own gold file.
		local gold=$DEV.subtaskB.relevancy
		[ "$st" = a ] && gold=$XML/SemEval2016-Task3-CQA-QL-dev-subtaskA.xml.subtaskA.relevancy
		$SR export semeval2016 --run "$R/heldout-$st.trec" --data "$R/heldout-$st" --out "$R/heldout-$st.pred"
		$SR eval --qrels "$gold" --run "$R/heldout-$st.pred" --metrics map@10,mrr@10
		;;
	fusion-ceiling)
		# How far a linear fusion of the recipes' stages can go on dev:
		# weights fitted on the dev judgments themselves (in-sample), over
		# the stage models trained on the training files (after recipe-a
		# and recipe-b). Not a result: a ceiling for the fusion.
		local s d
		for s in a b; do
			d=$R/recipe-$s/train
			$SR train fusion --data "$R/recipe-$s/data/split-dev" --pipeline "$d/pipeline.yaml" --out "$d/fusion-dev-fitted.model" > "$R/fusion-ceiling-$s.txt"
			sed 's#model: fusion.model#model: fusion-dev-fitted.model#' "$d/pipeline.yaml" > "$d/pipeline-dev-fitted.yaml"
			$SR rerank --data "$R/recipe-$s/data/split-dev" --pipeline "$d/pipeline-dev-fitted.yaml" --out "$R/fusion-ceiling-$s.trec" >> "$R/fusion-ceiling-$s.txt"
		done
		;;
	learning-curve)
		# Cross-validated MAP of the recipes' stage sets (b3, a10) as the
		# number of training queries grows (more folds, more training
		# queries per fold): the evidence for training the final SemEval
		# pipelines on train and dev together.
		mkdir -p "$R/learning-curve"
		local k
		for k in 2 3 5 10; do
			rm -rf "$R/learning-curve/b-f$k"
			to "$R/learning-curve/b-f$k.txt" $SR experiment beir --data "$O/B-all" --stages lexical,tweak,s2net,lsa --folds $k --out "$R/learning-curve/b-f$k"
		done
		for k in 2 5 10; do
			rm -rf "$R/learning-curve/a-f$k"
			to "$R/learning-curve/a-f$k.txt" $SR experiment beir --data "$O/A-all" --stages lexical,meta,tweak,bilinear,deepmatch,siamese,quality,peers --folds $k --out "$R/learning-curve/a-f$k"
		done
		;;
	lambdamart)
		# The recipes' stage sets (b3, a8) with boosted-tree fusion instead
		# of the linear one, by 5-fold CV.
		mkdir -p "$R/ablations"
		local e entry sub
		for e in b3 a8; do
			entry=$(tr ' ' '\n' <<<"$ABLATIONS" | grep "^$e:")
			sub=${e:0:1}
			rm -rf "$R/ablations/$e-lambdamart-cv"
			to "$R/ablations/$e-lambdamart.cv.txt" $SR experiment beir --data "$O/${sub^^}-all" --stages "${entry#*:}" --fusion lambdamart --out "$R/ablations/$e-lambdamart-cv"
		done
		;;
	beir-cacm)
		rm -rf "$R/beir-cacm" # experiment beir refuses an earlier run's index
		$SR experiment beir --data "$O/cacm" --folds 5 --out "$R/beir-cacm" 2>&1 | tee "$R/beir-cacm.txt"
		;;
	beir-cacm-unsup)
		rm -rf "$R/beir-cacm-unsup"
		$SR experiment beir --data "$O/cacm" --unsupervised "${EQUAL[@]}" --out "$R/beir-cacm-unsup" 2>&1 | tee "$R/beir-cacm-unsup.txt"
		;;
	beir-cacm-d200)
		# The same recipes with a first stage twice as deep (BM25 top 200).
		rm -rf "$R/beir-cacm-d200" "$R/beir-cacm-unsup-d200"
		$SR experiment beir --data "$O/cacm" --folds 5 --depth 200 --out "$R/beir-cacm-d200" 2>&1 | tee "$R/beir-cacm-d200.txt"
		$SR experiment beir --data "$O/cacm" --unsupervised "${EQUAL[@]}" --depth 200 --out "$R/beir-cacm-unsup-d200" 2>&1 | tee "$R/beir-cacm-unsup-d200.txt"
		;;
	plain-cacm)
		# CACM in an index semrank did not build (examples/plainindex:
		# bleve.NewIndexMapping(), fields title, abstract, authors),
		# searched and reranked as it is, beside semrank's own index.
		vectors
		mkdir -p "$R/plain"
		rm -rf "$R/plain/cacm.idx"
		go run ./examples/plainindex --corpus "$O/cacm/corpus.jsonl" --index "$R/plain/cacm.idx"
		for f in lexical unsup; do
			for ix in plain semrank; do
				{
					echo "window: 100"
					[ $ix = plain ] && printf 'fields: {title: title, text: abstract}\n'
					printf 'stages:\n  - type: tfidf\n  - type: bm25\n  - type: length\n'
					[ $f = unsup ] && printf '  - type: wmd\n    model: ../cacm.vec\n  - type: ssg\n    model: ../cacm.vec\n    options: {topics: ../cacm.topics}\n'
				} >"$R/plain/$f-$ix.yaml"
			done
		done
		$SR run --data "$O/cacm" --index "$R/plain/cacm.idx" --out "$R/plain/first-plain.trec"
		$SR run --data "$O/cacm" --index "$R/cacm.idx" --out "$R/plain/first-semrank.trec"
		for f in lexical unsup; do
			for ix in plain semrank; do
				idx=$R/plain/cacm.idx
				[ $ix = semrank ] && idx=$R/cacm.idx
				$SR run --data "$O/cacm" --index "$idx" --pipeline "$R/plain/$f-$ix.yaml" --out "$R/plain/$f-$ix.trec"
				echo "== $f pipeline over the $ix index, against its own first stage"
				$SR eval --qrels "$O/cacm/qrels/test.tsv" --run "$R/plain/$f-$ix.trec" --baseline "$R/plain/first-$ix.trec" \
					--metrics map,ndcg@10,p@10 --ignore-unjudged
			done
		done 2>&1 | tee "$R/plain-cacm.txt"
		;;
	plain-cacm-supervised)
		# The supervised CACM recipe's stages (lexical, TWEAK, S2Net,
		# LSA) and a learned fusion, trained from the plain index of
		# plain-cacm (its documents through semrank convert bleve, its
		# first stage's top 100 as candidate lists) and reranking it,
		# 5-fold cross-validated over the judged queries.
		[ -d "$R/plain/cacm.idx" ] || run plain-cacm >/dev/null
		local c="$R/plain-sup"
		rm -rf "$c"
		mkdir -p "$c"
		printf 'window: 100\nfields: {title: title, text: [abstract, authors]}\n' >"$c/fields.yaml"
		printf 'stages:\n  - type: tfidf\n  - type: bm25\n  - type: overlap\n  - type: length\n' >>"$c/fields.yaml"
		$SR convert bleve --index "$R/plain/cacm.idx" --pipeline "$c/fields.yaml" --out "$c/corpus" >/dev/null
		$SR run --data "$O/cacm" --index "$R/plain/cacm.idx" --depth 100 --out "$c/first.trec" >/dev/null
		cut -f1 "$O/cacm/qrels/test.tsv" | tail -n +2 | sort -u >"$c/judged"
		grep -F -f <(sed 's/.*/"_id":"&"/' "$c/judged") "$O/cacm/queries.jsonl" >"$c/queries.jsonl"
		for f in 0 1 2 3 4; do
			for part in train fuse test; do
				local d="$c/f$f-$part"
				mkdir -p "$d/qrels"
				ln -s "$(realpath "$c/corpus/corpus.jsonl")" "$d/corpus.jsonl"
				if [ $part = test ]; then
					awk -v f=$f 'NR % 5 == f' "$c/queries.jsonl" >"$d/queries.jsonl"
				else
					awk -v f=$f 'NR % 5 != f' "$c/queries.jsonl" >"$d/queries.jsonl"
				fi
				sed 's/.*"_id":"\([^"]*\)".*/\1/' "$d/queries.jsonl" >"$d/ids"
				{ head -1 "$O/cacm/qrels/test.tsv"; awk 'NR == FNR { q[$1] = 1; next } $1 in q' "$d/ids" <(tail -n +2 "$O/cacm/qrels/test.tsv"); } >"$d/qrels/test.tsv"
				# Stage trainers learn from candidate lists; the
				# fusion from searches, as the pipeline will run.
				[ $part = train ] && awk 'NR == FNR { q[$1] = 1; next } $1 in q' "$d/ids" "$c/first.trec" >"$d/candidates.trec"
				rm "$d/ids"
			done
			cp "$c/fields.yaml" "$c/f$f.yaml"
			for m in tweak s2net lsa; do
				$SR train $m --data "$c/f$f-train" --out "$c/f$f.$m" >/dev/null 2>&1
				printf '  - type: %s\n    model: f%s.%s\n' $m $f $m >>"$c/f$f.yaml"
			done
			$SR train fusion --data "$c/f$f-fuse" --index "$R/plain/cacm.idx" --pipeline "$c/f$f.yaml" --out "$c/f$f.fusion" >/dev/null
			printf 'fusion: {model: f%s.fusion}\n' $f >>"$c/f$f.yaml"
			$SR run --data "$c/f$f-test" --index "$R/plain/cacm.idx" --pipeline "$c/f$f.yaml" --out "$c/f$f.trec" >/dev/null
		done
		cat "$c"/f?.trec >"$c/run.trec"
		$SR eval --qrels "$O/cacm/qrels/test.tsv" --run "$c/run.trec" --baseline "$c/first.trec" --metrics map,ndcg@10,p@10 --ignore-unjudged | tee "$R/plain-cacm-supervised.txt"
		;;
	plain-recipe)
		# The supervised BEIR recipe (5-fold, cross-fitted fusion) over a
		# plain Bleve index (semrank experiment beir --index: nothing
		# indexed, its documents read through the fields below, its own
		# first stage), beside the same recipe over semrank's own index
		# of the collection, on CACM (plain-cacm's index; the stages
		# read title, abstract and authors) and MED (plain-ideas'
		# index). Each collection's two runs are compared query by query.
		# A recipe whose run.trec exists is not run again (remove
		# $R/plain-recipe/COL-INDEX to); COLS picks the collections.
		local c="$R/plain-recipe" col d ix
		mkdir -p "$c"
		printf 'fields: {title: title, text: [abstract, authors]}\nstages: [{type: tfidf}]\n' >"$c/cacm-fields.yaml"
		printf 'fields: {title: title, text: abstract}\nstages: [{type: tfidf}]\n' >"$c/med-fields.yaml"
		for col in ${COLS:-cacm med}; do
			d=$O/$col
			[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/$col
			[ $col = cacm ] && { [ -d "$R/plain/cacm.idx" ] || run plain-cacm >/dev/null; }
			[ $col = med ] && { [ -d "$R/plain-ideas/med.idx" ] || run plain-ideas >/dev/null; }
			for ix in plain semrank; do
				[ -f "$c/$col-$ix/run.trec" ] && continue
				rm -rf "$c/$col-$ix"
				if [ $ix = plain ]; then
					local pidx=$R/plain/cacm.idx
					[ $col = med ] && pidx=$R/plain-ideas/med.idx
					$SR experiment beir --data "$d" --index "$pidx" --pipeline "$c/$col-fields.yaml" --folds 5 --out "$c/$col-$ix" >"$c/$col-$ix.txt"
				else
					$SR experiment beir --data "$d" --folds 5 --out "$c/$col-$ix" >"$c/$col-$ix.txt"
				fi
			done
			{
				for ix in plain semrank; do
					echo "== $col, the recipe over the $ix index, against that index's first stage"
					$SR eval --qrels "$d/qrels/test.tsv" --run "$c/$col-$ix/run.trec" --baseline "$c/$col-$ix/baseline.trec" --metrics map,ndcg@10,p@10 --ignore-unjudged
				done
				echo "== $col, the recipe over the plain index against the recipe over semrank's"
				$SR eval --qrels "$d/qrels/test.tsv" --run "$c/$col-plain/run.trec" --baseline "$c/$col-semrank/run.trec" --metrics map,ndcg@10,p@10 --ignore-unjudged
			} 2>&1 | tee "$R/plain-recipe-$col.txt"
		done
		;;
	plain-attach)
		# semrank attach over plain-cacm's index: payloads computed from
		# its stored text. The runs over a copy with them attached must
		# be byte-identical to those over the index without; then the
		# cost, each index's bench (bare and reranked interleaved),
		# alternating between the two indexes.
		[ -f "$R/plain/unsup-plain.trec" ] || run plain-cacm >/dev/null
		local c="$R/plain-attach"
		rm -rf "$c"
		mkdir -p "$c"
		cp -r "$R/plain/cacm.idx" "$c/cacm.idx"
		{
			$SR attach --index "$c/cacm.idx" --pipeline "$R/plain/unsup-plain.yaml"
			echo "== again, nothing changed"
			$SR attach --index "$c/cacm.idx" --pipeline "$R/plain/unsup-plain.yaml"
			for f in lexical unsup; do
				$SR run --data "$O/cacm" --index "$c/cacm.idx" --pipeline "$R/plain/$f-plain.yaml" --out "$c/$f.trec" >/dev/null
				cmp "$c/$f.trec" "$R/plain/$f-plain.trec" && echo "== $f: run over the attached index identical to the run without"
			done
			for round in 1 2; do
				for ix in plain attached; do
					idx=$R/plain/cacm.idx
					[ $ix = attached ] && idx=$c/cacm.idx
					echo "== lexical (tfidf, bm25, length), $ix index, round $round"
					$SR bench --index "$idx" --pipeline "$R/plain/lexical-plain.yaml" --data "$O/cacm" --rounds 3
				done
			done
		} 2>&1 | tee "$R/plain-attach.txt"
		;;
	plain-analyzer)
		# Reranking plain Bleve indexes (examples/plainindex: the standard
		# analyzer, no stemming) with the lexical stages analyzing as the
		# index does, and with fields.analyzer: semrank_en, its term counts
		# attached (semrank attach) and statistics counted from them; windows
		# 100 and 200, 100 results written either way, each against the
		# index's own first stage (match on _all, top 100). CACM's stages
		# read title, abstract and authors; the classic collections have
		# no authors.
		local c="$R/plain-analyzer" col d idx text an w y
		rm -rf "$c"
		mkdir -p "$c"
		{
			for col in cacm adi lisa med time; do
				d=${CLASSIC:-../shared/data/classic}/$col
				text=abstract
				if [ $col = cacm ]; then
					d=$O/cacm
					text="[abstract, authors]"
				fi
				idx=$c/$col.idx
				go run ./examples/plainindex --corpus "$d/corpus.jsonl" --index "$idx" >/dev/null
				$SR run --data "$d" --index "$idx" --out "$c/$col-first.trec" >/dev/null
				for an in index semrank_en; do
					for w in 100 200; do
						y=$c/$col-$an-$w.yaml
						{
							printf 'window: %s\nfields: {title: title, text: %s' $w "$text"
							[ $an = index ] || printf ', analyzer: %s' $an
							printf '}\nstages:\n  - type: tfidf\n  - type: bm25\n  - type: length\n'
						} >"$y"
						[ $an = index ] || $SR attach --index "$idx" --pipeline "$y" >/dev/null
						$SR run --data "$d" --index "$idx" --pipeline "$y" --depth 100 --out "$c/$col-$an-$w.trec" >/dev/null
						echo "== $col, lexical stages, analyzer: $an, window $w"
						$SR eval --qrels "$d/qrels/test.tsv" --run "$c/$col-$an-$w.trec" --baseline "$c/$col-first.trec" --metrics map,ndcg@10 --ignore-unjudged
					done
				done
			done
		} 2>&1 | tee "$R/plain-analyzer.txt"
		;;
	plain-ideas)
		# Why the no-judgment pipeline gains little over the plain CACM
		# index, and whether what helps there holds on MED: the stages
		# given the authors too; the stages analyzing with semrank_en
		# (stemming) and its statistics, reranking the plain index's own
		# first-stage lists over the documents converted from it (what a
		# semrank_en attachment would give); and the same over a plain
		# index of MED (vectors trained on MED's documents).
		[ -f "$R/plain/unsup-plain.trec" ] || run plain-cacm >/dev/null
		local c="$R/plain-ideas" col d idx tf tag f
		rm -rf "$c"
		mkdir -p "$c"
		$SR train embed --data "${CLASSIC:-../shared/data/classic}/med" --out "$c/med.vec" >/dev/null
		$SR train topics --data "${CLASSIC:-../shared/data/classic}/med" --topics 50 --out "$c/med.topics" >/dev/null
		cp "$R/cacm.vec" "$R/cacm.topics" "$c/"
		go run ./examples/plainindex --corpus "${CLASSIC:-../shared/data/classic}/med/corpus.jsonl" --index "$c/med.idx" >/dev/null
		ln -s "$(realpath "$R/plain/cacm.idx")" "$c/cacm.idx"
		{
			for col in cacm med; do
				d=$O/$col
				[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/$col
				idx=$c/$col.idx
				$SR run --data "$d" --index "$idx" --depth 100 --out "$c/$col-first.trec" >/dev/null
				for tf in abstract "[abstract, authors]"; do
					tag=ab
					[ "$tf" = abstract ] || tag=aa
					[ $col = med ] && [ $tag = aa ] && continue # MED has no authors
					for f in lexical unsup; do
						{
							printf 'window: 100\nfields: {title: title, text: %s}\nstages:\n  - type: tfidf\n  - type: bm25\n  - type: length\n' "$tf"
							[ $f = unsup ] && printf '  - type: wmd\n    model: %s.vec\n  - type: ssg\n    model: %s.vec\n    options: {topics: %s.topics}\n' $col $col $col
						} >"$c/$col-$f-$tag.yaml"
						$SR run --data "$d" --index "$idx" --pipeline "$c/$col-$f-$tag.yaml" --out "$c/$col-$f-$tag.trec" >/dev/null
						echo "== $col, $f, text: $tf, the index's analyzer (standard)"
						$SR eval --qrels "$d/qrels/test.tsv" --run "$c/$col-$f-$tag.trec" --baseline "$c/$col-first.trec" --metrics map,ndcg@10 --ignore-unjudged
					done
					# semrank_en: the documents as the stages read them,
					# the first stage's lists as given candidates, fused
					# by their given rank (the plain first stage's), not
					# the rank the temporary index's BM25 gives them.
					local g="$c/$col-$tag-given"
					mkdir -p "$g/qrels"
					$SR convert bleve --index "$idx" --pipeline "$c/$col-lexical-$tag.yaml" --out "$g" >/dev/null
					cp "$d/queries.jsonl" "$g/"
					cp "$d/qrels/test.tsv" "$g/qrels/"
					cp "$c/$col-first.trec" "$g/candidates.trec"
					for f in lexical unsup; do
						{
							grep -v '^fields:' "$c/$col-$f-$tag.yaml" | sed "s#model: $col#model: ../$col#; s#topics: $col#topics: ../$col#"
							printf 'fusion:\n  weights: {given_rank: 1, first_rank: 0, tfidf: 1, bm25: 1, length: 1%s}\n' "$([ $f = unsup ] && echo ', wmd: 1, ssg: 1')"
						} >"$g/$f.yaml"
						$SR rerank --data "$g" --pipeline "$g/$f.yaml" --out "$c/$col-$f-$tag-semrank_en.trec" >/dev/null
						echo "== $col, $f, text: $tf, semrank_en (stemming) and its statistics"
						$SR eval --qrels "$d/qrels/test.tsv" --run "$c/$col-$f-$tag-semrank_en.trec" --baseline "$c/$col-first.trec" --metrics map,ndcg@10 --ignore-unjudged
					done
				done
			done
		} 2>&1 | tee "$R/plain-ideas.txt"
		;;
	query-boost)
		# first_stage.query_boost on CACM, 2-fold over the judged
		# queries: TWEAK (sum of squares) trained on one half's BM25 top
		# 100, its query weights boosting the other half's first stage.
		vectors
		local c="$R/query-boost"
		rm -rf "$c"
		mkdir -p "$c"
		$SR run --data "$O/cacm" --index "$R/cacm.idx" --depth 100 --out "$c/candidates.trec" >/dev/null
		cut -f1 "$O/cacm/qrels/test.tsv" | tail -n +2 | sort -u >"$c/judged"
		for f in 0 1; do
			for part in train test; do
				local d="$c/f$f-$part"
				mkdir -p "$d/qrels"
				ln -s "$(realpath "$O/cacm/corpus.jsonl")" "$d/corpus.jsonl"
				# Judged queries, alternately to one fold and the other.
				grep -F -f <(sed 's/.*/"_id":"&"/' "$c/judged") "$O/cacm/queries.jsonl" |
					awk -v f=$f -v p=$part '(NR % 2 == f) == (p == "test")' >"$d/queries.jsonl"
				sed 's/.*"_id":"\([^"]*\)".*/\1/' "$d/queries.jsonl" >"$d/ids"
				{ head -1 "$O/cacm/qrels/test.tsv"; awk 'NR == FNR { q[$1] = 1; next } $1 in q' "$d/ids" <(tail -n +2 "$O/cacm/qrels/test.tsv"); } >"$d/qrels/test.tsv"
				[ $part = train ] && awk 'NR == FNR { q[$1] = 1; next } $1 in q' "$d/ids" "$c/candidates.trec" >"$d/candidates.trec"
				rm "$d/ids"
			done
			$SR train tweak --data "$c/f$f-train" --index "$R/cacm.idx" --loss sse --out "$c/f$f.tweak" >/dev/null
			printf 'window: 100\nfirst_stage: {query_boost: tweak}\nstages:\n  - type: tweak\n    model: f%s.tweak\nfusion: {method: none}\n' $f >"$c/f$f.yaml"
			$SR run --data "$c/f$f-test" --index "$R/cacm.idx" --pipeline "$c/f$f.yaml" --out "$c/f$f-boost.trec" >/dev/null
			$SR run --data "$c/f$f-test" --index "$R/cacm.idx" --out "$c/f$f-bm25.trec" >/dev/null
		done
		cat "$c"/f*-boost.trec >"$c/boost.trec"
		cat "$c"/f*-bm25.trec >"$c/bm25.trec"
		$SR eval --qrels "$O/cacm/qrels/test.tsv" --run "$c/boost.trec" --baseline "$c/bm25.trec" --metrics map,ndcg@10,p@10 --ignore-unjudged | tee "$R/query-boost.txt"
		;;
	cost)
		# semrank bench: bare top-10 Bleve search and the reranked one,
		# interleaved, window 100, over CACM's 64 queries.
		vectors
		mkdir -p "$R/cost"
		[ -d "$R/plain/cacm.idx" ] || run plain-cacm >/dev/null
		printf 'window: 100\nstages: [{type: tfidf}]\n' >"$R/cost/tfidf.yaml"
		printf 'window: 100\nstages: []\nfusion: {method: none}\n' >"$R/cost/empty.yaml"
		printf 'window: 100\nfields: {title: title, text: abstract}\nstages: [{type: tfidf}]\n' >"$R/cost/tfidf-plain.yaml"
		printf 'window: 100\nfields: {title: title, text: abstract}\nstages: [{type: tfidf}, {type: bm25}, {type: overlap}]\n' >"$R/cost/readme-plain.yaml"
		printf 'window: 100\nstages:\n  - type: wmd\n    model: ../cacm.vec\n' >"$R/cost/wmd.yaml"
		printf 'window: 100\nstages:\n  - type: ssg\n    model: ../cacm.vec\n    options: {topics: ../cacm.topics}\n' >"$R/cost/ssg.yaml"
		printf 'window: 100\nstages:\n  - type: ssg\n    model: ../cacm.vec\n    options: {topics: ../cacm.topics, neighbours: cacm.lists}\n' >"$R/cost/ssg-lists.yaml"
		{ [ "$R/cost/cacm.lists" -nt "$R/cacm.vec" ] && [ "$R/cost/cacm.lists" -nt "$R/cacm.idx" ]; } ||
			$SR train neighbours --pipeline "$R/cost/ssg.yaml" --index "$R/cacm.idx" --out "$R/cost/cacm.lists"
		# The wmd row over CACM indexed with its pipeline, which stores each
		# document's nBOW (payload nbow), and over the index without them.
		rm -rf "$R/cost/wmd.idx"
		$SR index --data "$O/cacm" --index "$R/cost/wmd.idx" --pipeline "$R/cost/wmd.yaml" >/dev/null
		{
			for p in empty tfidf wmd ssg ssg-lists; do
				echo "== $p, semrank index"
				$SR bench --index "$R/cacm.idx" --pipeline "$R/cost/$p.yaml" --data "$O/cacm" --rounds 5
			done
			echo "== wmd, semrank index with its nbow payloads"
			$SR bench --index "$R/cost/wmd.idx" --pipeline "$R/cost/wmd.yaml" --data "$O/cacm" --rounds 5
			echo "== tfidf, plain Bleve index (examples/plainindex)"
			$SR bench --index "$R/plain/cacm.idx" --pipeline "$R/cost/tfidf-plain.yaml" --data "$O/cacm" --rounds 5
			for p in lexical unsup; do
				echo "== $p (plain-cacm), plain Bleve index"
				$SR bench --index "$R/plain/cacm.idx" --pipeline "$R/plain/$p-plain.yaml" --data "$O/cacm" --rounds 3
			done
			for w in 50 200 400; do
				echo "== tfidf, semrank index, window $w"
				$SR bench --index "$R/cacm.idx" --pipeline "$R/cost/tfidf.yaml" --data "$O/cacm" --rounds 5 --window $w
			done
			# The SemEval recipes (recipe-b, recipe-a first), over their
			# collections indexed with the payloads they read.
			for r in b a; do
				[ -f "$R/recipe-$r/pipeline.yaml" ] || continue
				local data=$O/B-all dev=$O/B-dev
				[ $r = a ] && data=$O/A-train dev=$O/A-dev
				rm -rf "$R/cost/$r.idx"
				$SR index --data "$data" --index "$R/cost/$r.idx" --pipeline "$R/recipe-$r/pipeline.yaml" >/dev/null
				echo "== recipe $r, its collection, its dev queries"
				$SR bench --index "$R/cost/$r.idx" --pipeline "$R/recipe-$r/pipeline.yaml" --data "$dev" --rounds 3
			done
		} 2>&1 | tee "$R/cost.txt"
		;;
	cost-before)
		# The cost section's rows for SR_BEFORE and SR alternating (ROUNDS
		# times, default 2; semrank bench --rounds 3 each, the ratio of all
		# rounds and, where SR prints it, of the first alone), over the indexes
		# the cost, plain-cacm and plain-analyzer sections leave (the cost
		# section's, built by SR, hold the payloads SR's stages read). ONLY,
		# a regular expression, keeps the rows whose name matches it.
		: "${SR_BEFORE:?cost-before compares SR with SR_BEFORE, another semrank binary}"
		local rows=(
			"tfidf cacm|$R/cacm.idx|$R/cost/tfidf.yaml|$O/cacm"
			"recipe B|$R/cost/b.idx|$R/recipe-b/pipeline.yaml|$O/B-dev"
			"recipe A|$R/cost/a.idx|$R/recipe-a/pipeline.yaml|$O/A-dev"
			"lexical plain attached w200|$R/plain-analyzer/cacm.idx|$R/plain-analyzer/cacm-semrank_en-200.yaml|$O/cacm"
			"tfidf plain fields|$R/plain/cacm.idx|$R/cost/tfidf-plain.yaml|$O/cacm"
			"README pipeline plain fields|$R/plain/cacm.idx|$R/cost/readme-plain.yaml|$O/cacm"
			"README no-judgment pipeline|$R/cacm.idx|$R/plain/unsup-semrank.yaml|$O/cacm"
			"no stage cacm|$R/cacm.idx|$R/cost/empty.yaml|$O/cacm"
			"wmd cacm|$R/cacm.idx|$R/cost/wmd.yaml|$O/cacm"
			"wmd nbow cacm|$R/cost/wmd.idx|$R/cost/wmd.yaml|$O/cacm"
			"ssg cacm|$R/cacm.idx|$R/cost/ssg.yaml|$O/cacm"
			"ssg lists cacm|$R/cacm.idx|$R/cost/ssg-lists.yaml|$O/cacm"
		)
		local row name idx pipe data r bin
		{
			for row in "${rows[@]}"; do
				IFS='|' read -r name idx pipe data <<<"$row"
				[[ $name =~ ${ONLY:-.} ]] || continue
				for r in $(seq "${ROUNDS:-2}"); do
					for bin in "$SR_BEFORE" "$SR"; do
						printf '%-28s %s round %s  ' "$name" "$bin" "$r"
						$bin bench --index "$idx" --pipeline "$pipe" --data "$data" --rounds 3 2>&1 | grep "ratio of medians" | paste -sd' '
					done
				done
			done
		} | tee "$R/cost-before.txt"
		;;
	split-cost)
		# A window's first-stage search on two cores (index.Search): query by
		# query, Bleve's own search for 116 hits beside the same search split
		# (examples/splitcost, every search split), over CACM with its queries
		# and over the serve section's 10k and 100k indexes (run it first)
		# with SemEval B dev's questions; then, with SR_BEFORE, semrank bench
		# of the serve section's pipeline over SCALE (default 100k; 1M where
		# built) for SR_BEFORE and SR alternating, ROUNDS times (default 2),
		# and both served under load (below).
		go build -o out/splitcost ./examples/splitcost
		local S=$R/scale c r bin
		{
			out/splitcost --index "$R/cacm.idx" --data "$O/cacm" | sed 's/^/cacm /'
			for c in 10k 100k; do
				out/splitcost --index "$S/$c-serve.idx" --data "$O/B-dev" | sed "s/^/$c /"
			done
		} | tee "$R/split-cost.txt"
		[ -n "${SR_BEFORE:-}" ] || return 0
		scale_bench ${SCALE:-100k} | tee "$R/split-bench.txt"
		serve_load 100k | tee "$R/split-serve.txt"
		;;
	serve-load)
		# semrank loadtest of SR_BEFORE's and SR's servers over the serve
		# section's indexes (SCALE, default 100k).
		: "${SR_BEFORE:?serve-load compares SR with SR_BEFORE, another semrank binary}"
		serve_load ${SCALE:-100k} | tee "$R/serve-load.txt"
		;;
	sum-cost)
		# Text queries scored term at a time (index.SumTerms): CACM's window
		# search beside Bleve's (examples/windowcost, one core), the
		# cost-before rows, and the scale bench over SCALE (default "10k
		# 100k 1M"), SR_BEFORE and SR alternating.
		: "${SR_BEFORE:?sum-cost compares SR with SR_BEFORE, another semrank binary}"
		GOMAXPROCS=1 go run ./examples/windowcost --index "$R/cacm.idx" --pipeline "$R/cost/empty.yaml" \
			--pipeline "$R/cost/tfidf.yaml" --data "$O/cacm" --rounds 10 | tee "$R/sum-cost-window.txt"
		run cost-before
		run scale-bench
		;;
	scale-bench)
		# semrank bench over the serve section's 10k-1M indexes (SCALE,
		# default "10k 100k 1M"), SR_BEFORE and SR alternating.
		: "${SR_BEFORE:?scale-bench compares SR with SR_BEFORE, another semrank binary}"
		scale_bench ${SCALE:-10k 100k 1M} | tee "$R/scale-bench.txt"
		;;
	cost-lexical)
		# The lexical path's rows (docs/RESULTS.md, "The lexical path"):
		# SR_BEFORE and SR alternating, ROUNDS times (default 3), semrank
		# bench --rounds 3 each: tfidf over CACM, recipe B, the pipeline
		# of no stage over CACM (the floor under a cheap stage), and
		# recipe B on one processor (GOMAXPROCS=1: its stages one after
		# another), each with the load average when it ran. Everything
		# lands in $R/cost-lexical.txt.
		: "${SR_BEFORE:?cost-lexical compares SR with SR_BEFORE, another semrank binary}"
		local rows=(
			"tfidf cacm|2|$R/cacm.idx|$R/cost/tfidf.yaml|$O/cacm"
			"recipe B|2|$R/cost/b.idx|$R/recipe-b/pipeline.yaml|$O/B-dev"
			"no stage cacm|2|$R/cacm.idx|$R/cost/empty.yaml|$O/cacm"
			"recipe B, one processor|1|$R/cost/b.idx|$R/recipe-b/pipeline.yaml|$O/B-dev"
		)
		local row name procs idx pipe data r bin
		{
			for r in $(seq "${ROUNDS:-3}"); do
				for row in "${rows[@]}"; do
					IFS='|' read -r name procs idx pipe data <<<"$row"
					for bin in "$SR_BEFORE" "$SR"; do
						printf '%-24s %s round %s  load %s  ' "$name" "$bin" "$r" "$(cut -d' ' -f1 /proc/loadavg)"
						GOMAXPROCS=$procs $bin bench --index "$idx" --pipeline "$pipe" --data "$data" --rounds 3 2>&1 | grep "^ratio of medians"
					done
				done
			done
		} | tee "$R/cost-lexical.txt"
		;;
	cost-stages)
		# Recipe B's stages (docs/RESULTS.md, "Recipe B's stages"):
		# SR_BEFORE and SR alternating, ROUNDS times (default 3), semrank
		# bench --rounds 3 each, recipe B on two processors and on one, and
		# tfidf over CACM, each with its medians, both ratios and the load
		# average when it ran; then, when WC_BEFORE and WC are set
		# (examples/windowcost built from the two trees), the same two
		# pipelines in CPU time on one processor, --rounds 5, alternating.
		# Everything lands in $R/cost-stages.txt.
		: "${SR_BEFORE:?cost-stages compares SR with SR_BEFORE, another semrank binary}"
		local rows=(
			"recipe B|2|$R/cost/b.idx|$R/recipe-b/pipeline.yaml|$O/B-dev"
			"recipe B, one processor|1|$R/cost/b.idx|$R/recipe-b/pipeline.yaml|$O/B-dev"
			"tfidf cacm|2|$R/cacm.idx|$R/cost/tfidf.yaml|$O/cacm"
		)
		local row name procs idx pipe data r bin
		{
			for r in $(seq "${ROUNDS:-3}"); do
				for row in "${rows[@]}"; do
					IFS='|' read -r name procs idx pipe data <<<"$row"
					for bin in "$SR_BEFORE" "$SR"; do
						printf '%s | %s | round %s | load %s\n' "$name" "$bin" "$r" "$(cut -d' ' -f1 /proc/loadavg)"
						GOMAXPROCS=$procs $bin bench --index "$idx" --pipeline "$pipe" --data "$data" --rounds 3 2>&1 |
							grep -E '^ *(bare|reranked)|^ratio of medians|^first round'
					done
				done
			done
			if [ -n "${WC_BEFORE:-}" ] && [ -n "${WC:-}" ]; then
				for r in $(seq "${ROUNDS:-3}"); do
					for row in "${rows[0]}" "${rows[2]}"; do
						IFS='|' read -r name procs idx pipe data <<<"$row"
						for bin in "$WC_BEFORE" "$WC"; do
							printf 'CPU, one processor: %s | %s | round %s | load %s\n' "$name" "$bin" "$r" "$(cut -d' ' -f1 /proc/loadavg)"
							GOMAXPROCS=1 $bin --index "$idx" --pipeline "$R/cost/empty.yaml" --pipeline "$pipe" --data "$data" --rounds 5 2>&1 |
								grep -E '^bleve top-10 |yaml +cpu|^stage'
						done
					done
				done
			fi
		} | tee "$R/cost-stages.txt"
		;;
	cost-a)
		# Recipe A's row of cost-before with each run's whole report (the
		# medians and every stage's time a window), then the stages this
		# section's changes touched, alone in a pipeline (window 100) over
		# the same index and queries: SR_BEFORE and SR alternating, ROUNDS
		# times (default 3), semrank bench --rounds 3 (the single stages
		# --rounds 2) each. Everything lands in $R/cost-a.txt.
		: "${SR_BEFORE:?cost-a compares SR with SR_BEFORE, another semrank binary}"
		local r bin p
		mkdir -p "$R/cost-a"
		printf 'window: 100\nstages:\n  - type: deepmatch\n    model: %s\n' "$(realpath "$R/recipe-a/models/deepmatch.model")" >"$R/cost-a/deepmatch.yaml"
		printf 'window: 100\nstages:\n  - type: tfidf\n    name: peers\n    options: {peers: true}\n' >"$R/cost-a/peers.yaml"
		{
			echo 'window: 100'
			echo 'stages:'
			for p in asker_after user_repeats asker_thanks asker_names; do
				printf '  - type: thread\n    name: %s\n    options: {feature: %s}\n' $p $p
			done
			printf '  - type: surface\n    name: urls\n    options: {feature: urls}\n'
		} >"$R/cost-a/thread.yaml"
		{
			for r in $(seq "${ROUNDS:-3}"); do
				for bin in "$SR_BEFORE" "$SR"; do
					echo "== $bin round $r (load $(cut -d' ' -f1-3 /proc/loadavg))"
					$bin bench --index "$R/cost/a.idx" --pipeline "$R/recipe-a/pipeline.yaml" --data "$O/A-dev" --rounds 3 2>&1
				done
			done
			for p in deepmatch peers thread; do
				for r in $(seq "${ROUNDS:-3}"); do
					for bin in "$SR_BEFORE" "$SR"; do
						echo "== $p alone, $bin round $r (load $(cut -d' ' -f1-3 /proc/loadavg))"
						$bin bench --index "$R/cost/a.idx" --pipeline "$R/cost-a/$p.yaml" --data "$O/A-dev" --rounds 2 2>&1 | sed -n '/^ *stage /,$p'
					done
				done
			done
		} | tee "$R/cost-a.txt"
		;;
	wmd-ssg-cost)
		# The wmd and ssg stages' cost and what weighing ssg's edges
		# between documents by WCD (edges: wcd, its default) rather than
		# by exact WMD (edges: wmd, the graph of the previous builds, bit
		# for bit) does to rankings.
		# semrank bench over CACM (window 100, then 50 to 400), SR_BEFORE's
		# beside SR's when given (alternating, two rounds each), and
		# ssg's two settings alternating; then runs scored wcd against
		# wmd with a paired test: ssg alone and the README's
		# no-judgment pipeline (plain-cacm's unsup) over CACM, the
		# unsupervised CACM recipe, ssg alone over SemEval B dev and B all.
		vectors
		[ -f "$R/plain/unsup-plain.yaml" ] || run plain-cacm >/dev/null
		local C=$R/wmd-ssg
		mkdir -p "$C"
		printf 'window: 100\nstages:\n  - type: wmd\n    model: ../cacm.vec\n' >"$C/wmd.yaml"
		printf 'window: 100\nstages:\n  - type: ssg\n    model: ../cacm.vec\n    options: {topics: ../cacm.topics}\n' >"$C/ssg.yaml"
		for d in wcd wmd; do
			printf 'window: 100\nstages:\n  - type: ssg\n    model: ../cacm.vec\n    options: {topics: ../cacm.topics, edges: %s}\n' $d >"$C/ssg-$d.yaml"
			printf 'stages:\n  - type: ssg\n    model: ../semeval.vec\n    options: {topics: ../semeval.topics, edges: %s}\nfusion: {weights: {ssg: 1}}\n' $d >"$C/ssg-b-$d.yaml"
			for ix in semrank plain; do
				sed "s/topics: ..\/cacm.topics}/topics: ..\/cacm.topics, edges: $d}/" "$R/plain/unsup-$ix.yaml" >"$C/unsup-$ix-$d.yaml"
			done
		done
		{
			for round in 1 2; do
				for p in wmd ssg-wcd; do
					for bin in ${SR_BEFORE:-} $SR; do
						pf=$C/$p.yaml
						# SR_BEFORE knows no edges option: its ssg is exact.
						[ "$bin" = "${SR_BEFORE:-}" ] && [ $p = ssg-wcd ] && pf=$C/ssg.yaml
						echo "== $p, $bin, round $round"
						$bin bench --index "$R/cacm.idx" --pipeline "$pf" --data "$O/cacm" --rounds 3
					done
				done
				for d in wmd wcd; do
					echo "== ssg, edges $d, round $round"
					$SR bench --index "$R/cacm.idx" --pipeline "$C/ssg-$d.yaml" --data "$O/cacm" --rounds 3
				done
			done
			for w in 50 100 200 400; do
				for p in wmd ssg-wcd; do
					echo "== $p, window $w"
					$SR bench --index "$R/cacm.idx" --pipeline "$C/$p.yaml" --data "$O/cacm" --rounds 3 --window $w
				done
			done
			for d in wmd wcd; do
				$SR run --data "$O/cacm" --index "$R/cacm.idx" --pipeline "$C/ssg-$d.yaml" --out "$C/ssg-$d.trec"
				for ix in semrank plain; do
					idx=$R/cacm.idx
					[ $ix = plain ] && idx=$R/plain/cacm.idx
					$SR run --data "$O/cacm" --index "$idx" --pipeline "$C/unsup-$ix-$d.yaml" --out "$C/unsup-$ix-$d.trec"
				done
				for b in B-dev B-all; do
					$SR rerank --data "$O/$b" --pipeline "$C/ssg-b-$d.yaml" --out "$C/ssg-$b-$d.trec" >/dev/null
				done
			done
			for r in ssg unsup-semrank unsup-plain; do
				echo "== CACM, $r: edges wcd against wmd"
				$SR eval --qrels "$O/cacm/qrels/test.tsv" --run "$C/$r-wcd.trec" --baseline "$C/$r-wmd.trec" \
					--metrics map,ndcg@10,p@10 --ignore-unjudged
			done
			# The unsupervised CACM recipe (beir-cacm-unsup), its pipeline
			# as it writes it and with edges: wmd.
			rm -rf "$C/beir-unsup"
			$SR experiment beir --data "$O/cacm" --unsupervised "${EQUAL[@]}" --out "$C/beir-unsup" >/dev/null
			sed '/^ *topics: models\//{p;s/topics: .*/edges: wmd/}' "$C/beir-unsup/pipeline.yaml" >"$C/beir-unsup/pipeline-wmd.yaml"
			for d in wcd wmd; do
				pf=$C/beir-unsup/pipeline.yaml
				[ $d = wmd ] && pf=$C/beir-unsup/pipeline-wmd.yaml
				$SR run --data "$O/cacm" --index "$C/beir-unsup/index" --pipeline "$pf" --out "$C/beir-unsup-$d.trec"
			done
			echo "== CACM, the unsupervised recipe (beir-cacm-unsup): edges wcd against wmd"
			$SR eval --qrels "$O/cacm/qrels/test.tsv" --run "$C/beir-unsup-wcd.trec" --baseline "$C/beir-unsup-wmd.trec" \
				--metrics map,ndcg@10,p@10 --ignore-unjudged
			for b in B-dev B-all; do
				echo "== SemEval $b, ssg: edges wcd against wmd"
				$SR eval --qrels "$O/$b/qrels/test.tsv" --run "$C/ssg-$b-wcd.trec" --baseline "$C/ssg-$b-wmd.trec"
			done
		} 2>&1 | tee "$R/wmd-ssg-cost.txt"
		;;
	neighbours)
		# The ssg stage's 2-hop searches started from the collection's
		# neighbour lists (semrank train neighbours): over CACM with the
		# cost section's vectors, for each list size in NSIZE (default
		# 200), the lists' time, the runs with and without them compared,
		# and semrank bench of ssg without lists and with each size,
		# alternating, ROUNDS times (default 3); then, for the collections
		# in NBR (default "time"; empty: none), the no-judgment recipe's
		# own pipeline (the agreement section's where it has run, else the
		# recipe run here) reranking its queries with and without lists:
		# times and runs compared.
		cacm_vectors
		local N=$R/neighbours c d dir z
		mkdir -p "$N"
		printf 'window: 100\nstages:\n  - type: ssg\n    model: ../cacm.vec\n    options: {topics: ../cacm.topics}\n' >"$N/ssg.yaml"
		{
			$SR run --data "$O/cacm" --index "$R/cacm.idx" --pipeline "$N/ssg.yaml" --out "$N/ssg.trec" >/dev/null
			for z in ${NSIZE:-200}; do
				printf 'window: 100\nstages:\n  - type: ssg\n    model: ../cacm.vec\n    options: {topics: ../cacm.topics, neighbours: cacm-%s.lists}\n' "$z" >"$N/ssg-lists-$z.yaml"
				$SR train neighbours --pipeline "$N/ssg.yaml" --index "$R/cacm.idx" --size "$z" --out "$N/cacm-$z.lists"
				ls -l "$N/cacm-$z.lists"
				$SR run --data "$O/cacm" --index "$R/cacm.idx" --pipeline "$N/ssg-lists-$z.yaml" --out "$N/ssg-lists-$z.trec" >/dev/null
				cmp "$N/ssg.trec" "$N/ssg-lists-$z.trec" && echo "CACM, ssg: runs identical with and without lists of $z"
			done
			# An update: CACM with its first 32 documents (1%) edited, the
			# lists of the first size brought up to date, and the edited
			# collection's runs with and without them compared.
			z=$(echo ${NSIZE:-200} | cut -d' ' -f1)
			rm -rf "$N/cacm-edited" "$N/cacm-edited.idx"
			cp -r "$O/cacm" "$N/cacm-edited"
			sed -i '1,32s/"text": *"/&compiler recursion matrix inversion /' "$N/cacm-edited/corpus.jsonl"
			$SR index --data "$N/cacm-edited" --index "$N/cacm-edited.idx" >/dev/null
			$SR train neighbours --pipeline "$N/ssg.yaml" --index "$N/cacm-edited.idx" --update "$N/cacm-$z.lists" --out "$N/cacm-edited.lists"
			sed "s/cacm-$z.lists/cacm-edited.lists/" "$N/ssg-lists-$z.yaml" >"$N/ssg-edited-lists.yaml"
			for p in ssg ssg-edited-lists; do
				$SR run --data "$N/cacm-edited" --index "$N/cacm-edited.idx" --pipeline "$N/$p.yaml" --out "$N/edited-$p.trec" >/dev/null
			done
			cmp "$N/edited-ssg.trec" "$N/edited-ssg-edited-lists.trec" && echo "CACM edited, ssg: runs identical with and without the updated lists"
			for r in $(seq "${ROUNDS:-3}"); do
				for p in ssg ssg-edited-lists; do
					echo "== CACM edited, $p, round $r"
					$SR bench --index "$N/cacm-edited.idx" --pipeline "$N/$p.yaml" --data "$N/cacm-edited" --rounds 3
				done
			done
			for r in $(seq "${ROUNDS:-3}"); do
				for p in ssg $(printf 'ssg-lists-%s ' ${NSIZE:-200}); do
					echo "== $p, round $r"
					$SR bench --index "$R/cacm.idx" --pipeline "$N/$p.yaml" --data "$O/cacm" --rounds 3
				done
			done
			for c in ${NBR-time}; do
				d=$(coldir "$c")
				dir=$R/agreement/$c-default
				if [ ! -f "$dir/pipeline.yaml" ]; then
					dir=$N/$c-recipe
					rm -rf "$dir"
					$SR experiment beir --data "$d" --unsupervised --out "$dir" >/dev/null
				fi
				$SR train neighbours --pipeline "$dir/pipeline.yaml" --index "$dir/index" --out "$dir/lists"
				cp "$dir/pipeline.yaml" "$dir/nolists.yaml"
				sed 's/^\( *\)topics: \(.*\)$/\1topics: \2\n\1neighbours: lists/' "$dir/pipeline.yaml" >"$dir/lists.yaml"
				echo "== $c, the recipe's pipeline: semrank rerank without and with lists (seconds)"
				rerank_rounds "$dir/lists-time.txt" "$d" "$dir" nolists lists
				cmp "$dir/cost-nolists.trec" "$dir/cost-lists.trec" && echo "$c: runs identical with and without lists"
			done
		} 2>&1 | tee "$R/neighbours.txt"
		;;
	solver-cost)
		# The wmd and ssg stages' cost (issue 24) with this build's
		# transport solves against SR_BEFORE's: semrank bench over CACM,
		# window 100, the two builds alternating (ROUNDS times, default 2;
		# --rounds 2 each), then both at windows 50 to 400; last, the CACM
		# runs of the wmd, ssg and README no-judgment pipelines by both,
		# compared byte for byte.
		: "${SR_BEFORE:?solver-cost compares SR with SR_BEFORE, another semrank binary}"
		vectors
		[ -f "$R/plain/unsup-semrank.yaml" ] || run plain-cacm >/dev/null
		local C=$R/solver
		mkdir -p "$C"
		printf 'window: 100\nstages:\n  - type: wmd\n    model: ../cacm.vec\n' >"$C/wmd.yaml"
		printf 'window: 100\nstages:\n  - type: ssg\n    model: ../cacm.vec\n    options: {topics: ../cacm.topics}\n' >"$C/ssg.yaml"
		cp "$R/plain/unsup-semrank.yaml" "$C/unsup-semrank.yaml"
		{
			for round in $(seq "${ROUNDS:-2}"); do
				for p in wmd ssg; do
					for bin in "$SR_BEFORE" "$SR"; do
						echo "== $p, window 100, $bin, round $round"
						$bin bench --index "$R/cacm.idx" --pipeline "$C/$p.yaml" --data "$O/cacm" --rounds 2
					done
				done
			done
			for w in 50 100 200 400; do
				for p in wmd ssg; do
					for bin in "$SR_BEFORE" "$SR"; do
						echo "== $p, window $w, $bin"
						$bin bench --index "$R/cacm.idx" --pipeline "$C/$p.yaml" --data "$O/cacm" --rounds 2 --window $w
					done
				done
			done
			for p in wmd ssg unsup-semrank; do
				$SR_BEFORE run --data "$O/cacm" --index "$R/cacm.idx" --pipeline "$C/$p.yaml" --out "$C/$p-before.trec" >/dev/null
				$SR run --data "$O/cacm" --index "$R/cacm.idx" --pipeline "$C/$p.yaml" --out "$C/$p.trec" >/dev/null
				if cmp -s "$C/$p-before.trec" "$C/$p.trec"; then
					echo "== CACM run, $p: byte-identical"
				else
					echo "== CACM run, $p: differs"
				fi
			done
		} 2>&1 | tee "$R/solver-cost.txt"
		;;
	scale)
		# Indexing cost (issue 27): build wall, user and system CPU and
		# peak RSS of plain Bleve (examples/plainindex: Bleve's default
		# mapping, no compaction), on every core (plain) and on one
		# (plain1: GOMAXPROCS=1), beside semrank index without payloads
		# (term counts only) and with a pipeline storing term counts, TWEAK
		# and LSA k=100 payloads (both compact to one segment when done),
		# and SR_BEFORE's beside SR's when given. VARIANTS picks some of
		# these (e.g. "plain plain1 pipeline"). The builds run
		# interleaved, ROUNDS times, on collections of ~200-byte documents
		# recombined from SemEval forum text (examples/scalecorpus: 10k,
		# 100k, 1M) and on CACM and subtask A train. Each build goes to
		# $c-build-$v.idx and is removed after; the serve section's indexes
		# ($c-plain.idx, $c-serve.idx) are left alone.
		local S=$R/scale
		mkdir -p "$S"
		[ -f "$S/tweak.model" ] || $SR train tweak --data "$O/A-train" --loss sse --alpha 0.1 --max-iter 50 --out "$S/tweak.model" >/dev/null
		[ -f "$S/lsa.model" ] || $SR train lsa --data "$O/A-train" --dim 100 --out "$S/lsa.model" >/dev/null
		printf 'window: 100\nstages:\n  - type: tfidf\n  - type: tweak\n    model: tweak.model\n  - type: lsa\n    model: lsa.model\n' >"$S/pipeline.yaml"
		go build -o out/plainindex ./examples/plainindex
		local c n data
		for c in ${SCALE:-cacm A-train 10k 100k}; do
			case $c in
			*k | *M)
				n=${c%k}
				[ "$c" = 1M ] && n=1000
				data=$S/$c
				[ -f "$data/corpus.jsonl" ] || go run ./examples/scalecorpus --xml "$T2" --xml "$DEV" --xml "$E1" --xml "$E2" \
					--docs $((n * 1000)) --out "$data" >/dev/null
				;;
			*) data=$O/$c ;;
			esac
			local r v bin
			for r in $(seq "${ROUNDS:-2}"); do
				for v in ${VARIANTS:-plain plain1 ${SR_BEFORE:+before-bare} bare ${SR_BEFORE:+before-pipeline} pipeline}; do
					rm -rf "$S/$c-build-$v.idx"
					bin=$SR
					[[ $v == before-* ]] && bin=$SR_BEFORE
					case $v in
					plain) set -- out/plainindex --corpus "$data/corpus.jsonl" --index "$S/$c-build-$v.idx" ;;
					plain1) set -- env GOMAXPROCS=1 out/plainindex --corpus "$data/corpus.jsonl" --index "$S/$c-build-$v.idx" ;;
					*bare) set -- "$bin" index --data "$data" --index "$S/$c-build-$v.idx" ;;
					*pipeline) set -- "$bin" index --data "$data" --index "$S/$c-build-$v.idx" --pipeline "$S/pipeline.yaml" ;;
					esac
					printf '%s %s %s ' "$c" "$v" "$r"
					/usr/bin/time -f '%e %U %S %M' -o "$S/time" "$@" >/dev/null 2>&1
					cat "$S/time"
					rm -rf "$S/$c-build-$v.idx"
				done
			done
		done | tee "$S/runs.txt"
		# Means over the rounds: wall s, CPU s (user + sys), peak RSS MiB,
		# CPU as a multiple of plain Bleve's, and wall time as a multiple
		# of plain Bleve's on one core (plain1; "-" when not run).
		awk '{ k = $1 " " $2; if (!(k in n)) order[m++] = k; n[k]++; w[k] += $4; cpu[k] += $5 + $6; rss[k] += $7 }
			END { printf "%-20s %8s %8s %8s %9s %10s\n", "collection variant", "wall s", "CPU s", "RSS MiB", "CPU/plain", "wall/plain1"
				for (i = 0; i < m; i++) { k = order[i]; split(k, a, " "); p = a[1] " plain"; p1 = a[1] " plain1"
					cp = (p in n) ? sprintf("%9.2f", cpu[k] / n[k] / (cpu[p] / n[p])) : sprintf("%9s", "-")
					w1 = (p1 in n) ? sprintf("%10.2f", w[k] / n[k] / (w[p1] / n[p1])) : sprintf("%10s", "-")
					printf "%-20s %8.2f %8.2f %8.0f %s %s\n", k, w[k] / n[k], cpu[k] / n[k], rss[k] / n[k] / 1024, cp, w1 } }' \
			"$S/runs.txt" | tee "$R/scale.txt"
		;;
	serve)
		# Serving cost (issue 27): open time, heap once open and peak RSS
		# (examples/servecost under /usr/bin/time; 200 title queries) of
		# plain Bleve (examples/plainindex, match queries), and of the scale
		# section's semrank pipeline index (term counts, TWEAK, LSA k=100
		# payloads, compacted) searched bare and reranked by the pipeline
		# from its stored payloads; with SR_BEFORE and SERVECOST_BEFORE (the
		# same programs built from another tree), that build's index beside.
		# Collections: SCALE (default "10k 100k"), as in the scale section;
		# the indexes are built once and kept in $R/scale. ROUNDS
		# interleaved rounds (default 2).
		local S=$R/scale
		mkdir -p "$S"
		[ -f "$S/tweak.model" ] || $SR train tweak --data "$O/A-train" --loss sse --alpha 0.1 --max-iter 50 --out "$S/tweak.model" >/dev/null
		[ -f "$S/lsa.model" ] || $SR train lsa --data "$O/A-train" --dim 100 --out "$S/lsa.model" >/dev/null
		printf 'window: 100\nstages:\n  - type: tfidf\n  - type: tweak\n    model: tweak.model\n  - type: lsa\n    model: lsa.model\n' >"$S/pipeline.yaml"
		go build -o out/plainindex ./examples/plainindex
		go build -o out/servecost ./examples/servecost
		local c n data r v
		for c in ${SCALE:-10k 100k}; do
			n=${c%k}
			[ "$c" = 1M ] && n=1000
			data=$S/$c
			[ -f "$data/corpus.jsonl" ] || go run ./examples/scalecorpus --xml "$T2" --xml "$DEV" --xml "$E1" --xml "$E2" \
				--docs $((n * 1000)) --out "$data" >/dev/null
			[ -d "$S/$c-plain.idx" ] || out/plainindex --corpus "$data/corpus.jsonl" --index "$S/$c-plain.idx" >/dev/null
			[ -d "$S/$c-serve.idx" ] || $SR index --data "$data" --index "$S/$c-serve.idx" --pipeline "$S/pipeline.yaml" >/dev/null
			[ -z "${SR_BEFORE:-}" ] || [ -d "$S/$c-serve-before.idx" ] ||
				$SR_BEFORE index --data "$data" --index "$S/$c-serve-before.idx" --pipeline "$S/pipeline.yaml" >/dev/null
			for r in $(seq "${ROUNDS:-2}"); do
				for v in plain ${SR_BEFORE:+before-bare} bare ${SR_BEFORE:+before-reranked} reranked; do
					case $v in
					plain) set -- out/servecost --plain --index "$S/$c-plain.idx" ;;
					before-bare) set -- "$SERVECOST_BEFORE" --index "$S/$c-serve-before.idx" ;;
					before-reranked) set -- "$SERVECOST_BEFORE" --index "$S/$c-serve-before.idx" --pipeline "$S/pipeline.yaml" ;;
					bare) set -- out/servecost --index "$S/$c-serve.idx" ;;
					reranked) set -- out/servecost --index "$S/$c-serve.idx" --pipeline "$S/pipeline.yaml" ;;
					esac
					printf '%s %s %s ' "$c" "$v" "$r"
					/usr/bin/time -f '%M %U %S' -o "$S/time" "$@" --corpus "$data/corpus.jsonl" | tr '\n' ' '
					cat "$S/time"
				done
			done
		done | tee "$S/serve-runs.txt"
		# Means over the rounds: open ms, heap MiB once open, ms per query
		# (wall), peak RSS MiB, RSS as a multiple of plain Bleve's, and the
		# process's CPU s (user + sys: opening, reading the titles and the
		# 200 queries).
		awk '{ k = $1 " " $2; if (!(k in n)) order[m++] = k; n[k]++; o[k] += $4; h[k] += $5; q[k] += $6; rss[k] += $7; cpu[k] += $8 + $9 }
			END { printf "%-22s %9s %9s %9s %9s %9s %9s\n", "collection variant", "open ms", "heap MiB", "ms/query", "RSS MiB", "RSS/plain", "CPU s"
				for (i = 0; i < m; i++) { k = order[i]; split(k, a, " "); p = a[1] " plain"
					printf "%-22s %9.1f %9.1f %9.2f %9.0f %9.2f %9.2f\n", k, o[k] / n[k], h[k] / n[k], q[k] / n[k], rss[k] / n[k] / 1024, rss[k] / rss[p], cpu[k] / n[k] } }' \
			"$S/serve-runs.txt" | tee "$R/serve.txt"
		;;
	nojudge)
		# Learning without judgments (issue 26), self-training: on CACM,
		# SemEval-2016 B (train-part2 + dev, its given lists reranked) and
		# the classic collections, the self-trained recipe (--pseudo
		# title,sentence: 100 pseudo-queries, a title or else a sentence
		# of a document, with its 5 nearest documents weakly relevant),
		# the same with each pseudo-query's own document alone relevant
		# (own), and the default fixed weights (fixed). Each self-trained
		# run's stages.txt says what it kept; MAP and nDCG@10 against BM25
		# (its baseline.trec) by semrank eval go to
		# $R/nojudge/C-RUN.eval.txt. EXTRA=1 adds sentence and
		# salient-terms pseudo-queries, and self-training with GloVe
		# vectors when GLOVE names a file (scripts/wink_glove.py).
		local c d n args runs=(selftrain own fixed)
		[ -z "${EXTRA:-}" ] || runs+=(sentence terms vectors)
		mkdir -p "$R/nojudge"
		for c in cacm B-all med lisa time adi; do
			d=$O/$c
			[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/$c
			for n in "${runs[@]}"; do
				case $n in
				selftrain) args=(--pseudo title,sentence) ;;
				own) args=(--pseudo title,sentence --pseudo-neighbours 0) ;;
				sentence | terms) args=(--pseudo "$n") ;;
				fixed) args=("${EQUAL[@]}") ;;
				vectors)
					[ -s "${GLOVE:-}" ] || continue
					args=(--pseudo title,sentence --vectors "$GLOVE")
					;;
				esac
				rm -rf "$R/nojudge/$c-$n"
				to "$R/nojudge/$c-$n.txt" $SR experiment beir --data "$d" --unsupervised "${args[@]}" --out "$R/nojudge/$c-$n"
				to "$R/nojudge/$c-$n.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/nojudge/$c-$n/run.trec" \
					--baseline "$R/nojudge/$c-$n/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
			done
		done
		;;
	selftrain-papers)
		# The papers' supervised models trained without judgments (issue
		# 26, eighteenth session): on each collection of SELFTRAIN
		# (default "adi med B-all cacm lisa time"), each run of SELFRUNS
		# (default "tfidf tweak s2net dse deepmatch"): a stage type, the recipe
		# self-trained on pseudo-queries (--pseudo title,sentence) with
		# that stage alone, whose report gives the stage alone and its
		# fusion with the first stage as the pseudo-queries chose it;
		# "all", the self-trained recipe choosing among every stage it
		# knows and DSE and DeepMatch; "glove", the self-trained recipe
		# with GloVe vectors (GLOVE, default out/glove-wink-100d.txt).
		# Outputs in $R/selftrain-papers/C-RUN (report C-RUN.txt, scored
		# against BM25 in C-RUN.eval.txt).
		local c d n args g=${GLOVE:-out/glove-wink-100d.txt}
		mkdir -p "$R/selftrain-papers"
		for c in ${SELFTRAIN:-adi med B-all cacm lisa time}; do
			d=$(coldir "$c")
			for n in ${SELFRUNS:-tfidf tweak s2net dse deepmatch}; do
				case $n in
				all) args=(--stages tfidf,bm25,length,wmd,ssg,rm3,tweak,s2net,lsa,dse,deepmatch) ;;
				glove)
					[ -s "$g" ] || { echo "selftrain-papers: no vectors at $g (python3 scripts/wink_glove.py $g; set GLOVE)" >&2; return 1; }
					args=(--vectors "$g")
					;;
				*) args=(--stages "$n") ;;
				esac
				recipe_run "$R/selftrain-papers/$c-$n" "$d" --unsupervised --pseudo title,sentence "${args[@]}"
			done
		done
		;;
	ceiling-nojudge)
		# How far the project's stages go where the no-judgment recipe
		# stays short of 10% (issue 26, eighteenth session): on each
		# collection of CEIL (default "B-all time"), (1) every stage that
		# reads no judgments (tfidf, bm25, length, wmd, ssg, rm3,
		# proximity, regularize) and TWEAK, S2Net and LSA, trained and
		# fused on judged queries, 5-fold cross-validated ($R/ceiling/C,
		# C.eval.txt); (2) the stages that read no judgments alone, with
		# (1)'s index and word vectors, their linear fusion fitted on every
		# judged query: in-sample, a ceiling for fusing them, not a result
		# ($R/ceiling/C-insample.trec, C-insample.eval.txt).
		local c d p
		mkdir -p "$R/ceiling"
		for c in ${CEIL:-B-all time}; do
			d=$(coldir "$c")
			p=$R/ceiling/$c
			[ -n "${CEILFITONLY:-}" ] || recipe_run "$p" "$d" --stages tfidf,bm25,length,wmd,ssg,rm3,proximity,regularize,tweak,s2net,lsa --folds 5
			awk '/^    - type: (tweak|s2net|lsa)$/ {skip = 1; next} /^    - |^[a-z]/ {skip = 0} /^    models\/(tweak|s2net|lsa)\.model:/ {next} !skip' "$p/pipeline.yaml" |
				sed 's#model: fusion.model#model: fusion-insample.model#; /^    fusion.model:/d' >"$p/pipeline-insample.yaml"
			$SR train fusion --data "$d" --index "$p/index" --pipeline "$p/pipeline-insample.yaml" --out "$p/fusion-insample.model" >"$p-insample.txt"
			$SR rerank --data "$d" --index "$p/index" --pipeline "$p/pipeline-insample.yaml" --out "$p-insample.trec" >>"$p-insample.txt"
			compare_runs "$p-insample" "$d" "$p-insample.trec" "$p/baseline.trec"
		done
		;;
	nojudge-fixed)
		# Learning without judgments (issue 26), the fixed-weight recipe
		# (the default) and its variants: on CACM, SemEval-2016 B
		# (train-part2 + dev, its given lists reranked) and the classic
		# collections, BM25 against rm3 alone (semrank rerank with an rm3
		# pipeline over the recipe's index), the unsupervised recipe before
		# issue 26 (overlap in, rm3 out), the recipe without rm3, the
		# recipe, and the recipe with pre-trained GloVe vectors (GLOVE,
		# written by scripts/wink_glove.py when missing). Each run's MAP
		# and nDCG@10 against BM25 (the recipe's baseline.trec) by semrank
		# eval go to $R/nojudge-fixed/C-RUN.eval.txt.
		local glove=${GLOVE:-out/glove-wink-100d.txt} c d n stages
		[ -s "$glove" ] || python3 scripts/wink_glove.py "$glove"
		mkdir -p "$R/nojudge-fixed"
		printf 'window: 100\nstages:\n  - type: rm3\nfusion:\n  weights: {rm3: 1}\n' >"$R/nojudge-fixed/rm3.yaml"
		for c in cacm B-all med lisa time adi; do
			d=$O/$c
			[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/$c
			for n in recipe before no-rm3 vectors rm3; do
				case $n in
				recipe) stages=() ;;
				before) stages=(--stages tfidf,bm25,overlap,length,wmd,ssg) ;;
				no-rm3) stages=(--stages tfidf,bm25,length,wmd,ssg) ;;
				vectors) stages=(--vectors "$glove") ;;
				rm3)
					$SR rerank --data "$d" --index "$R/nojudge-fixed/$c-recipe/index" --pipeline "$R/nojudge-fixed/rm3.yaml" --out "$R/nojudge-fixed/$c-rm3.trec" >/dev/null
					to "$R/nojudge-fixed/$c-rm3.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/nojudge-fixed/$c-rm3.trec" \
						--baseline "$R/nojudge-fixed/$c-recipe/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
					continue
					;;
				esac
				rm -rf "$R/nojudge-fixed/$c-$n"
				to "$R/nojudge-fixed/$c-$n.txt" $SR experiment beir --data "$d" --unsupervised "${EQUAL[@]}" "${stages[@]}" --out "$R/nojudge-fixed/$c-$n"
				to "$R/nojudge-fixed/$c-$n.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/nojudge-fixed/$c-$n/run.trec" \
					--baseline "$R/nojudge-fixed/$c-$n/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
			done
		done
		;;
	prf)
		# First-stage pseudo-relevance feedback (issue 26, RM3 with
		# re-retrieval): on CACM, SemEval-2016 B (its given lists) and the
		# classic collections (CLASSIC), the unsupervised recipe over
		# BM25's window (recipe, the default) and over the window the
		# expanded query retrieves (--feedback rm3: 10 documents, 30
		# terms, lambda 0.5), and BM25+RM3 alone (semrank rerank with a
		# pipeline of the first stage with feedback and no stages, over
		# the recipe's index), beside the rm3 stage rescoring BM25's window
		# (rm3stage) and the window feedback retrieved (rm3both), and
		# BM25+RM3 with each boost divided by its idf (rm3first-once). Each
		# run's MAP and nDCG@10 against BM25
		# (baseline.trec) go to $R/prf/C-RUN.eval.txt, and the
		# feedback recipe against the default recipe to
		# $R/prf/C-fb-vs-recipe.eval.txt.
		local c d n
		mkdir -p "$R/prf"
		printf 'window: 100\nfirst_stage:\n  feedback: {docs: 10, terms: 30, lambda: 0.5}\nstages: []\nfusion:\n  method: none\n' >"$R/prf/rm3first.yaml"
		printf 'window: 100\nfirst_stage:\n  feedback: {docs: 10, terms: 30, lambda: 0.5, idf: once}\nstages: []\nfusion:\n  method: none\n' >"$R/prf/rm3first-once.yaml"
		printf 'window: 100\nstages:\n  - type: rm3\nfusion:\n  weights: {rm3: 1}\n' >"$R/prf/rm3stage.yaml"
		printf 'window: 100\nfirst_stage:\n  feedback: {docs: 10, terms: 30, lambda: 0.5}\nstages:\n  - type: rm3\nfusion:\n  weights: {rm3: 1}\n' >"$R/prf/rm3both.yaml"
		for c in ${PRF:-cacm B-all med lisa time adi}; do
			d=$O/$c
			[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/$c
			for n in recipe fb; do
				rm -rf "$R/prf/$c-$n"
				to "$R/prf/$c-$n.txt" $SR experiment beir --data "$d" --unsupervised "${EQUAL[@]}" $([ $n = fb ] && echo --feedback rm3) --out "$R/prf/$c-$n"
				to "$R/prf/$c-$n.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/prf/$c-$n/run.trec" \
					--baseline "$R/prf/$c-$n/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
			done
			for n in rm3first rm3first-once rm3stage rm3both; do
				$SR rerank --data "$d" --index "$R/prf/$c-fb/index" --pipeline "$R/prf/$n.yaml" --out "$R/prf/$c-$n.trec" >/dev/null
				to "$R/prf/$c-$n.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/prf/$c-$n.trec" \
					--baseline "$R/prf/$c-fb/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
			done
			to "$R/prf/$c-fb-vs-recipe.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/prf/$c-fb/run.trec" \
				--baseline "$R/prf/$c-recipe/run.trec" --metrics map,ndcg@10 --ignore-unjudged
		done
		;;
	prfguard)
		# Choosing first-stage feedback without judgments (issue 26), on
		# each collection (PRF): (1) the recipe with --feedback auto, which
		# prints what it measured on pseudo-queries (BM25's window against
		# BM25+RM3's) to $R/prfguard/C-auto.txt, its run against BM25 and,
		# when the prf section has run, against the recipe over BM25's
		# window and over BM25+RM3's ($R/prf/C-recipe, C-fb), and whether its
		# run.trec is byte-identical to the one of the window it chose
		# (C-auto.same.txt); (2) the same choice for BM25+RM3 guarded with
		# min_overlap G (0.5, 0.7, 0.9), printed by a run of the cheapest
		# stage (length) to C-choiceG.txt; (3) the guarded BM25+RM3 alone
		# (rerank with a pipeline of the first stage and no stages) against
		# BM25, and how many judged queries it expanded (those whose window
		# differs from BM25's) to C-rm3guardG.expanded.txt; (4) unless
		# GUARDRECIPE=no, the recipe over the window guarded with
		# min_overlap 0.5, against BM25 and the prf section's two recipes.
		local c d n g
		mkdir -p "$R/prfguard"
		for g in 0.5 0.7 0.9; do
			printf 'window: 100\nfirst_stage:\n  feedback: {docs: 10, terms: 30, lambda: 0.5, min_overlap: %s}\nstages: []\nfusion:\n  method: none\n' $g >"$R/prfguard/rm3guard$g.yaml"
		done
		for c in ${PRF:-adi med cacm lisa B-all time}; do
			d=$O/$c
			[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/$c
			feedback_recipe "$R/prfguard/$c-auto" "$d" auto
			rm -f "$R/prfguard/$c-auto.same.txt"
			for n in recipe fb; do
				cmp -s "$R/prfguard/$c-auto/run.trec" "$R/prf/$c-$n/run.trec" && echo "run.trec byte-identical to $R/prf/$c-$n/run.trec" >>"$R/prfguard/$c-auto.same.txt"
			done
			for g in 0.5 0.7 0.9; do
				rm -rf "$R/prfguard/$c-choice$g"
				to "$R/prfguard/$c-choice$g.txt" $SR experiment beir --data "$d" --unsupervised "${EQUAL[@]}" --stages length \
					--feedback "auto,min_overlap=$g" --out "$R/prfguard/$c-choice$g"
				$SR rerank --data "$d" --index "$R/prfguard/$c-auto/index" --pipeline "$R/prfguard/rm3guard$g.yaml" --out "$R/prfguard/$c-rm3guard$g.trec" >/dev/null
				to "$R/prfguard/$c-rm3guard$g.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/prfguard/$c-rm3guard$g.trec" \
					--baseline "$R/prfguard/$c-auto/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
				to "$R/prfguard/$c-rm3guard$g.expanded.txt" awk '{r[FILENAME, $1] = r[FILENAME, $1] " " $3} FILENAME == ARGV[1] {q[$1] = 1}
					END { for (k in q) { n++; if (r[ARGV[1], k] != r[ARGV[2], k]) e++ } printf "%d of %d judged queries expanded\n", e, n }' \
					"$R/prfguard/$c-auto/baseline.trec" "$R/prfguard/$c-rm3guard$g.trec"
			done
			[ "${GUARDRECIPE:-yes}" = yes ] || continue
			feedback_recipe "$R/prfguard/$c-guard" "$d" min_overlap=0.5
		done
		;;
	prfscope)
		# First-stage feedback within the query's matches (issue 26,
		# feedback scope query): on each collection (PRF), what --feedback
		# auto,scope=query measures on pseudo-queries, printed by a recipe
		# run of the cheapest stage (length) to $R/prfscope/C-choice.txt;
		# BM25+RM3 of scope query alone (rerank with a pipeline of the first
		# stage and no stages) against BM25; and the recipe over that window
		# against BM25 and, when the prf section has run, against the
		# recipe over BM25's window and over BM25+RM3's ($R/prf/C-recipe,
		# C-fb).
		local c d
		mkdir -p "$R/prfscope"
		printf 'window: 100\nfirst_stage:\n  feedback: {docs: 10, terms: 30, lambda: 0.5, scope: query}\nstages: []\nfusion:\n  method: none\n' >"$R/prfscope/rm3query.yaml"
		for c in ${PRF:-adi med cacm lisa B-all time}; do
			d=$O/$c
			[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/$c
			rm -rf "$R/prfscope/$c-choice"
			to "$R/prfscope/$c-choice.txt" $SR experiment beir --data "$d" --unsupervised "${EQUAL[@]}" --stages length \
				--feedback auto,scope=query --out "$R/prfscope/$c-choice"
			$SR rerank --data "$d" --index "$R/prfscope/$c-choice/index" --pipeline "$R/prfscope/rm3query.yaml" --out "$R/prfscope/$c-rm3query.trec" >/dev/null
			to "$R/prfscope/$c-rm3query.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/prfscope/$c-rm3query.trec" \
				--baseline "$R/prfscope/$c-choice/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
			feedback_recipe "$R/prfscope/$c-recipe" "$d" scope=query
		done
		;;
	proxreg)
		# Term proximity and score regularization (issue 26, ninth
		# session): on each collection (PROX; default "adi med cacm lisa
		# B-all time", SemEval B its given lists), first the cheap rows: a
		# recipe run of the two stages alone ($R/proxreg/C-alone.txt prints
		# each stage's row) whose index serves semrank rerank with one
		# stage each (proximity: Tao and Zhai's MinDist added to BM25;
		# regularize: Diaz's score regularization; bm25, the stage proximity
		# adds to, and proximity against it), against BM25, and how often
		# π is at its highest ($R/proxreg/C-pi-saturated.txt); then,
		# unless PROXFUSED=no, the recipe (tfidf, bm25, length, wmd, ssg),
		# the recipe with proximity, with regularize, and with both, each
		# against BM25 ($R/proxreg/C-RUN.eval.txt) and against the recipe
		# ($R/proxreg/C-RUN-vs-recipe.eval.txt). The recipe's report
		# ($R/proxreg/C-recipe.txt) has SSG's row alone beside them. Two
		# more runs: the recipe with regularize in place of ssg (swap), and
		# with proximity's π alone (proximity:bm25=false; pi). PROXRUNS
		# names the runs to make (default "recipe prox reg both swap pi");
		# $R/proxreg/C-sens.txt has the stage rows of other settings of
		# both stages (k 5 and 25, α 0.3, 0.7 and 0.9 for regularize; α 0.1
		# and 1 for proximity).
		local c d n stages
		mkdir -p "$R/proxreg"
		for n in proximity regularize bm25; do
			printf 'window: 100\nstages:\n  - type: %s\nfusion:\n  weights: {%s: 1}\n' $n $n >"$R/proxreg/$n.yaml"
		done
		printf 'window: 100\nstages:\n  - type: proximity\n    options: {bm25: false}\nfusion:\n  weights: {proximity: 1}\n' >"$R/proxreg/pi.yaml"
		for c in ${PROX:-adi med cacm lisa B-all time}; do
			d=$O/$c
			[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/$c
			rm -rf "$R/proxreg/$c-alone"
			to "$R/proxreg/$c-alone.txt" $SR experiment beir --data "$d" --unsupervised "${EQUAL[@]}" --stages proximity,regularize --out "$R/proxreg/$c-alone"
			rm -rf "$R/proxreg/$c-sens"
			to "$R/proxreg/$c-sens.txt" $SR experiment beir --data "$d" --unsupervised "${EQUAL[@]}" --out "$R/proxreg/$c-sens" \
				--stages regularize:k=5,regularize:k=25,regularize:alpha=0.3,regularize:alpha=0.7,regularize:alpha=0.9,proximity:alpha=0.1,proximity:alpha=1
			for n in proximity regularize bm25; do
				$SR rerank --data "$d" --index "$R/proxreg/$c-alone/index" --pipeline "$R/proxreg/$n.yaml" --out "$R/proxreg/$c-$n.trec" >/dev/null
				to "$R/proxreg/$c-$n.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/proxreg/$c-$n.trec" \
					--baseline "$R/proxreg/$c-alone/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
			done
			to "$R/proxreg/$c-proximity-vs-bm25.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/proxreg/$c-proximity.trec" \
				--baseline "$R/proxreg/$c-bm25.trec" --metrics map,ndcg@10 --ignore-unjudged
			# How often π saturates: the share of candidates whose π (the
			# stage with bm25 false, alone) is their query's highest.
			$SR rerank --data "$d" --index "$R/proxreg/$c-alone/index" --pipeline "$R/proxreg/pi.yaml" --out "$R/proxreg/$c-pi.trec" >/dev/null
			awk -v c="$c" '{ q[NR] = $1; s[NR] = $5 + 0; if (!($1 in m) || $5 + 0 > m[$1]) m[$1] = $5 + 0 }
				END { for (i = 1; i <= NR; i++) if (s[i] > m[q[i]] - 1e-9) n++; printf "%s: %d of %d candidates (%.1f%%) at their query'"'"'s highest π\n", c, n, NR, 100 * n / NR }' \
				"$R/proxreg/$c-pi.trec" >"$R/proxreg/$c-pi-saturated.txt"
		done
		[ "${PROXFUSED:-}" != no ] || return 0
		for c in ${PROX:-adi med cacm lisa B-all time}; do
			d=$O/$c
			[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/$c
			for n in ${PROXRUNS:-recipe prox reg both swap pi}; do
				case $n in
				recipe) stages=() ;;
				prox) stages=(--stages tfidf,bm25,length,wmd,ssg,proximity) ;;
				reg) stages=(--stages tfidf,bm25,length,wmd,ssg,regularize) ;;
				both) stages=(--stages tfidf,bm25,length,wmd,ssg,proximity,regularize) ;;
				swap) stages=(--stages tfidf,bm25,length,wmd,regularize) ;;
				pi) stages=(--stages tfidf,bm25,length,wmd,ssg,proximity:bm25=false) ;;
				esac
				rm -rf "$R/proxreg/$c-$n"
				to "$R/proxreg/$c-$n.txt" $SR experiment beir --data "$d" --unsupervised "${EQUAL[@]}" "${stages[@]}" --out "$R/proxreg/$c-$n"
				to "$R/proxreg/$c-$n.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/proxreg/$c-$n/run.trec" \
					--baseline "$R/proxreg/$c-$n/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
				[ $n = recipe ] || to "$R/proxreg/$c-$n-vs-recipe.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/proxreg/$c-$n/run.trec" \
					--baseline "$R/proxreg/$c-recipe/run.trec" --metrics map,ndcg@10 --ignore-unjudged
			done
		done
		;;
	fusedreg)
		# Regularizing the fused score (issue 26, tenth session): on each
		# collection (FUSEDREG; default "adi med cacm lisa B-all time",
		# SemEval B its given lists), the recipe ($R/fusedreg/C-recipe)
		# and the recipe with --after-fusion regularize, its fused scores
		# smoothed over the window's TF-IDF 10-NN graph at alpha 0.5
		# ($R/fusedreg/C-fusedreg), each against BM25
		# ($R/fusedreg/C-RUN.eval.txt), the second against the first
		# ($R/fusedreg/C-fusedreg-vs-recipe.eval.txt). Then, over the
		# recipe's index and models, semrank rerank with its pipeline and
		# fusion.regularize at alpha 0.5 (a05), 0.3 (a03) and 0.7 (a07),
		# each against BM25 and the recipe; a05 must rank the recipe's
		# (judged) queries as C-fusedreg does, byte for byte
		# ($R/fusedreg/C-same.txt says).
		local c d a n
		mkdir -p "$R/fusedreg"
		for c in ${FUSEDREG:-adi med cacm lisa B-all time}; do
			d=$O/$c
			[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/$c
			for n in recipe fusedreg; do
				rm -rf "$R/fusedreg/$c-$n"
				to "$R/fusedreg/$c-$n.txt" $SR experiment beir --data "$d" --unsupervised --fusion equal --out "$R/fusedreg/$c-$n" \
					--after-fusion "$([ $n = recipe ] && echo none || echo regularize)"
				to "$R/fusedreg/$c-$n.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/fusedreg/$c-$n/run.trec" \
					--baseline "$R/fusedreg/$c-$n/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
			done
			to "$R/fusedreg/$c-fusedreg-vs-recipe.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/fusedreg/$c-fusedreg/run.trec" \
				--baseline "$R/fusedreg/$c-recipe/run.trec" --metrics map,ndcg@10 --ignore-unjudged
			for a in 0.5 0.3 0.7; do
				n=a${a/./}
				{ cat "$R/fusedreg/$c-recipe/pipeline.yaml"; printf 'fusion:\n    regularize: {alpha: %s}\n' $a; } >"$R/fusedreg/$c-recipe/$n.yaml"
				$SR rerank --data "$d" --index "$R/fusedreg/$c-recipe/index" --pipeline "$R/fusedreg/$c-recipe/$n.yaml" --out "$R/fusedreg/$c-$n.trec" >/dev/null
				to "$R/fusedreg/$c-$n.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/fusedreg/$c-$n.trec" \
					--baseline "$R/fusedreg/$c-recipe/baseline.trec" --metrics map,ndcg@10 --ignore-unjudged
				to "$R/fusedreg/$c-$n-vs-recipe.eval.txt" $SR eval --qrels "$d/qrels/test.tsv" --run "$R/fusedreg/$c-$n.trec" \
					--baseline "$R/fusedreg/$c-recipe/run.trec" --metrics map,ndcg@10 --ignore-unjudged
			done
			# On the recipe run's queries, the judged ones (semrank rerank
			# ranks every query).
			if awk 'NR == FNR { q[$1] = 1; next } $1 in q' "$R/fusedreg/$c-fusedreg/run.trec" "$R/fusedreg/$c-a05.trec" |
				cmp -s - "$R/fusedreg/$c-fusedreg/run.trec"; then
				echo "$c: semrank rerank with fusion.regularize ranks as the recipe with --after-fusion regularize, byte for byte" >"$R/fusedreg/$c-same.txt"
			else
				echo "$c: semrank rerank with fusion.regularize and the recipe with --after-fusion regularize DIFFER" >"$R/fusedreg/$c-same.txt"
			fi
		done
		;;
	agreement)
		# The agreement fusion (issue 26, eleventh session): on each
		# collection (AGREE; default "adi med cacm lisa B-all time",
		# SemEval B its given lists), the recipe before it (fixed equal
		# weights, no step: $R/agreement/C-equal) and the recipe now
		# (agreement fusion and fusion.regularize: $R/agreement/C-default),
		# each against BM25 (C-RUN.eval.txt) and the second against the
		# first (C-default-vs-equal.eval.txt). Then, over the first's
		# index and models, semrank rerank with its pipeline and
		# fusion.regularize (equalreg), fusion method agreement alone
		# (agree), both (both: must rank the judged queries as C-default
		# does, byte for byte, $R/agreement/C-same.txt says),
		# fusion.regularize with adaptive: true (adaptive), both with
		# an rm3 stage added (bothrm3) and the recipe before without wmd
		# and ssg (lexical), each against BM25 and the recipe before.
		local c d n
		mkdir -p "$R/agreement"
		for c in ${AGREE:-adi med cacm lisa B-all time}; do
			d=$(coldir "$c")
			recipe_run "$R/agreement/$c-equal" "$d" --unsupervised "${EQUAL[@]}"
			recipe_run "$R/agreement/$c-default" "$d" --unsupervised
			compare_runs "$R/agreement/$c-default-vs-equal" "$d" "$R/agreement/$c-default/run.trec" "$R/agreement/$c-equal/run.trec"
			for n in equalreg agree both adaptive bothrm3 lexical; do
				fusion_variant "$R/agreement/$c-equal" "$d" "$n" "$R/agreement/$c-$n"
				compare_runs "$R/agreement/$c-$n" "$d" "$R/agreement/$c-$n.trec" "$R/agreement/$c-equal/baseline.trec"
				compare_runs "$R/agreement/$c-$n-vs-equal" "$d" "$R/agreement/$c-$n.trec" "$R/agreement/$c-equal/run.trec"
			done
			if awk 'NR == FNR { q[$1] = 1; next } $1 in q' "$R/agreement/$c-default/run.trec" "$R/agreement/$c-both.trec" |
				cmp -s - "$R/agreement/$c-default/run.trec"; then
				echo "$c: the recipe's run and semrank rerank with agreement and regularize over the equal recipe's index rank alike, byte for byte" >"$R/agreement/$c-same.txt"
			else
				echo "$c: the recipe's run and semrank rerank with agreement and regularize DIFFER" >"$R/agreement/$c-same.txt"
			fi
		done
		;;
	agreement-supervised)
		# What judgments would add to the recipe's own stages (issue 26,
		# eleventh session): on each collection of AGREE, the supervised
		# BEIR recipe over tfidf, bm25, length, wmd and ssg (5 folds, a
		# linear fusion learned on the other folds' judged queries;
		# $R/agreement/C-supervised), against BM25 and against the recipe
		# now (the agreement section's C-default, which must have run).
		local c d
		for c in ${AGREE:-adi med cacm lisa B-all time}; do
			d=$(coldir "$c")
			recipe_run "$R/agreement/$c-supervised" "$d" --stages tfidf,bm25,length,wmd,ssg --folds 5
			compare_runs "$R/agreement/$c-supervised-vs-default" "$d" "$R/agreement/$c-supervised/run.trec" "$R/agreement/$c-default/run.trec"
		done
		;;
	agreement-a)
		# The recipe before and now on SemEval-2016 subtask A (issue 26,
		# eleventh session), a check on collections the agreement fusion
		# was not chosen on: A-dev (244 questions) and A-train (988), each
		# question's 10 given comments reranked, judgments read only to
		# score. $R/agreement/C-equal and C-default, each against
		# BM25's order of the given lists, the second against the first;
		# then, over the first's index and models, the agreement fusion
		# alone (C-agree) and the step alone (C-equalreg) against it.
		local c d n
		for c in A-dev A-train; do
			d=$O/$c
			recipe_run "$R/agreement/$c-equal" "$d" --unsupervised "${EQUAL[@]}"
			recipe_run "$R/agreement/$c-default" "$d" --unsupervised
			compare_runs "$R/agreement/$c-default-vs-equal" "$d" "$R/agreement/$c-default/run.trec" "$R/agreement/$c-equal/run.trec"
			for n in agree equalreg; do
				fusion_variant "$R/agreement/$c-equal" "$d" "$n" "$R/agreement/$c-$n"
				compare_runs "$R/agreement/$c-$n-vs-equal" "$d" "$R/agreement/$c-$n.trec" "$R/agreement/$c-equal/run.trec"
			done
		done
		;;
	agreement-plain)
		# The recipe before and now over a plain Bleve index of CACM
		# (issue 26, eleventh session; plain-cacm's index, its documents
		# read through title, abstract and authors, its own first stage):
		# $R/agreement/plain-equal and plain-default, each against the
		# index's first stage, the second against the first.
		local d=$O/cacm ix=(--index "$R/plain/cacm.idx" --pipeline "$R/agreement/plain-fields.yaml")
		[ -d "$R/plain/cacm.idx" ] || run plain-cacm >/dev/null
		mkdir -p "$R/agreement"
		printf 'fields: {title: title, text: [abstract, authors]}\nstages: [{type: tfidf}]\n' >"$R/agreement/plain-fields.yaml"
		recipe_run "$R/agreement/plain-equal" "$d" "${ix[@]}" --unsupervised "${EQUAL[@]}"
		recipe_run "$R/agreement/plain-default" "$d" "${ix[@]}" --unsupervised
		compare_runs "$R/agreement/plain-default-vs-equal" "$d" "$R/agreement/plain-default/run.trec" "$R/agreement/plain-equal/run.trec"
		;;
	agreement-cost)
		# What the recipe now costs beside the recipe before (issue 26,
		# eleventh session): over CACM's equal-weight recipe index and
		# models from the agreement section ($R/agreement/cacm-equal),
		# semrank rerank of all 64 queries with its pipeline (pipeline),
		# with the agreement fusion alone (agree) and with the recipe
		# now's fusion and step (both), interleaved for ROUNDS rounds
		# (default 3); wall seconds of each run to $R/agreement/cost.txt.
		rerank_rounds "$R/agreement/cost.txt" "$(coldir cacm)" "$R/agreement/cacm-equal" pipeline agree both
		;;
	agreement-glove)
		# The recipe now with pre-trained vectors (issue 26, eleventh
		# session): on each collection of AGREE, semrank experiment beir
		# --unsupervised --vectors GLOVE ($R/agreement/C-glove), against
		# BM25 and against the recipe now without them (the agreement
		# section's C-default, which must have run).
		local c d g=${GLOVE:-out/glove-wink-100d.txt}
		[ -s "$g" ] || { echo "agreement-glove: no vectors at $g (python3 scripts/wink_glove.py $g; set GLOVE)" >&2; return 1; }
		for c in ${AGREE:-adi med cacm lisa B-all time}; do
			d=$(coldir "$c")
			recipe_run "$R/agreement/$c-glove" "$d" --unsupervised --vectors "$g"
			compare_runs "$R/agreement/$c-glove-vs-default" "$d" "$R/agreement/$c-glove/run.trec" "$R/agreement/$c-default/run.trec"
		done
		;;
	ppmi)
		# Count-based word vectors (issue 26, fifteenth session): on each
		# collection of AGREE, the recipe now with its wmd and ssg stages'
		# vectors counted (semrank experiment beir --unsupervised --stages
		# tfidf,bm25,length,wmd:embed_method=ppmi,ssg:embed_method=ppmi:
		# the same text and vocabulary as the skip-gram's;
		# $R/ppmi/C-recipe), against BM25 and against the recipe now (the
		# agreement section's C-default, which must exist); and wmd alone
		# and ssg alone over C-default's index with each recipe's vectors
		# (skip-gram: wmd-sgns, ssg-sgns; counted: wmd-ppmi, ssg-ppmi;
		# C-default's topic model), each against BM25 (NAME.eval.txt) and
		# the counted against the skip-gram's (wmd-ppmi-vs-sgns.eval.txt,
		# ssg-...). Outputs in $R/ppmi/C.
		local c d dir rec out m tp v st
		for c in ${AGREE:-adi med cacm lisa B-all time}; do
			d=$(coldir "$c")
			dir=$(cd "$R/agreement/$c-default" && pwd)
			out=$R/ppmi/$c
			mkdir -p "$out"
			recipe_run "$out-recipe" "$d" --unsupervised --stages tfidf,bm25,length,wmd:embed_method=ppmi,ssg:embed_method=ppmi
			compare_runs "$out-recipe-vs-default" "$d" "$out-recipe/run.trec" "$dir/run.trec"
			rec=$(cd "$out-recipe" && pwd)
			tp=$dir/$(sed -n 's/^ *topics: //p' "$dir/pipeline.yaml" | head -1)
			for v in sgns ppmi; do
				m=$dir/$(sed -n 's/^ *model: //p' "$dir/pipeline.yaml" | head -1)
				[ "$v" = ppmi ] && m=$rec/$(sed -n 's/^ *model: //p' "$rec/pipeline.yaml" | head -1)
				printf 'window: 100\nstages:\n  - type: wmd\n    model: %s\nfusion:\n  weights: {wmd: 1}\n' "$m" >"$out/wmd-$v.yaml"
				printf 'window: 100\nstages:\n  - type: ssg\n    model: %s\n    options: {topics: %s}\nfusion:\n  weights: {ssg: 1}\n' "$m" "$tp" >"$out/ssg-$v.yaml"
				for st in wmd ssg; do
					$SR rerank --data "$d" --index "$dir/index" --pipeline "$out/$st-$v.yaml" --out "$out/$st-$v.trec" >/dev/null
					compare_runs "$out/$st-$v" "$d" "$out/$st-$v.trec" "$dir/baseline.trec"
				done
			done
			for st in wmd ssg; do
				compare_runs "$out/$st-ppmi-vs-sgns" "$d" "$out/$st-ppmi.trec" "$out/$st-sgns.trec"
			done
		done
		;;
	ppmi-cost)
		# What the counted vectors cost in the wmd and ssg stages (issue
		# 26, fifteenth session): semrank bench over CACM's cost index
		# ($R/cacm.idx, the cost section's) of wmd alone and ssg alone with
		# the recipe's skip-gram vectors and with the ppmi section's counted
		# ones (CACM's recipe's: the same vocabulary), alternating, ROUNDS
		# times (default 2); then the two trainers' time;
		# $R/ppmi/cost.txt.
		local dir v p vecs tp r
		dir=$(cd "$R/agreement/cacm-default" && pwd)
		tp=$(cd "$R" && pwd)/cacm.topics
		for v in sgns ppmi; do
			vecs=$dir/$(sed -n 's/^ *model: //p' "$dir/pipeline.yaml" | head -1)
			[ "$v" = ppmi ] && vecs=$(cd "$R/ppmi/cacm-recipe" && pwd)/$(sed -n 's/^ *model: //p' "$R/ppmi/cacm-recipe/pipeline.yaml" | head -1)
			printf 'window: 100\nstages:\n  - type: wmd\n    model: %s\n' "$vecs" >"$R/ppmi/cost-wmd-$v.yaml"
			printf 'window: 100\nstages:\n  - type: ssg\n    model: %s\n    options: {topics: %s}\n' "$vecs" "$tp" >"$R/ppmi/cost-ssg-$v.yaml"
		done
		for r in $(seq "${ROUNDS:-2}"); do
			for p in wmd-sgns wmd-ppmi ssg-sgns ssg-ppmi; do
				printf '%s round %s  ' "$p" "$r"
				$SR bench --index "$R/cacm.idx" --pipeline "$R/ppmi/cost-$p.yaml" --data "$O/cacm" --rounds 2 2>&1 | grep "ratio of medians"
			done
		done >"$R/ppmi/cost.txt"
		# And training, both methods on TIME's text as the recipe trains
		# (minimum count 5; the skip-gram's 10 epochs), alternating: wall
		# seconds of each to $R/ppmi/train-time.txt.
		local t=$R/ppmi/train.embed d
		d=$(coldir time)
		for r in $(seq "${ROUNDS:-2}"); do
			for v in "--method sgns --epochs 10" "--method ppmi"; do
				rm -f "$t"
				printf '%s round %s  ' "$v" "$r"
				/usr/bin/time -f '%e s' $SR train embed $v --min-count 5 --data "$d" --out "$t" 2>&1 >/dev/null | tail -1
			done
		done >"$R/ppmi/train-time.txt"
		rm -f "$t"
		;;
	ppmi-supervised)
		# The agreement-supervised section's recipe with counted word
		# vectors for wmd and ssg (issue 26, fifteenth session): on each
		# collection of PPMISUP (default "time B-all"), $R/ppmi/C-supervised
		# against BM25 and against the skip-gram's (the agreement-supervised
		# section's C-supervised, which must have run).
		local c d
		for c in ${PPMISUP:-time B-all}; do
			d=$(coldir "$c")
			recipe_run "$R/ppmi/$c-supervised" "$d" --stages tfidf,bm25,length,wmd:embed_method=ppmi,ssg:embed_method=ppmi --folds 5
			compare_runs "$R/ppmi/$c-supervised-vs-sgns" "$d" "$R/ppmi/$c-supervised/run.trec" "$R/agreement/$c-supervised/run.trec"
		done
		;;
	proxreg-cost)
		# What regularize costs beside ssg, the project's graph method
		# (issue 26, ninth session): over CACM's recipe index and models
		# from the proxreg section ($R/proxreg/cacm-recipe), semrank rerank
		# of all 52 queries with no stage (the first stage alone), with
		# regularize alone and with ssg alone, interleaved for ROUNDS rounds
		# (default 3); wall seconds of each run to $R/proxreg/cost.txt.
		local dir=$R/proxreg/cacm-recipe d=$O/cacm m tp
		[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/cacm
		m=$(sed -n 's/^ *model: //p' "$dir/pipeline.yaml" | head -1)
		tp=$(sed -n 's/^ *topics: //p' "$dir/pipeline.yaml" | head -1)
		printf 'window: 100\nstages: []\nfusion:\n  method: none\n' >"$dir/none.yaml"
		printf 'window: 100\nstages:\n  - type: regularize\nfusion:\n  weights: {regularize: 1}\n' >"$dir/regularize.yaml"
		printf 'window: 100\nstages:\n  - type: ssg\n    model: %s\n    options: {topics: %s}\nfusion:\n  weights: {ssg: 1}\n' "$m" "$tp" >"$dir/ssg.yaml"
		rerank_rounds "$R/proxreg/cost.txt" "$d" "$dir" none regularize ssg
		;;
	fusedreg-cost)
		# What regularizing the fused score costs (issue 26, tenth
		# session): over CACM's recipe index and models from the fusedreg
		# section ($R/fusedreg/cacm-recipe), semrank rerank of all 64
		# queries with the recipe's pipeline (pipeline) and with it and
		# fusion.regularize (a05), interleaved for ROUNDS rounds (default
		# 3); wall seconds of each run to $R/fusedreg/cost.txt.
		local d=$O/cacm
		[ -d "$d" ] || d=${CLASSIC:-../shared/data/classic}/cacm
		rerank_rounds "$R/fusedreg/cost.txt" "$d" "$R/fusedreg/cacm-recipe" pipeline a05
		;;
	bench)
		go test -run '^$' -bench 'BenchmarkRerank|BenchmarkDeepMatch100' -benchtime 200x ./rerank/ ./rerank/stages/ | tee "$R/bench-rerank.txt"
		go test -run '^$' -bench 'BenchmarkIndexing' -benchtime 3x ./models/tweak/ | tee "$R/bench-indexing.txt"
		go test -run '^$' -bench 'BenchmarkPayloadRead' -benchtime 2000x ./index/ | tee "$R/bench-payload.txt"
		;;
	shards)
		# Sharded serving (issue 28): each collection of SHARDS (default
		# cacm; 100k is the scale section's 100,000-document collection,
		# searched with subtask B dev's questions) indexed whole and as 3
		# shards (semrank index --shard I/3), the shards served on
		# loopback (semrank serve), and semrank bench --remote: every
		# query's top 10 from one index and from a coordinator over the
		# shards must be the same ids, order and scores (to 1e-9), then the
		# two reranked searches are timed interleaved, ROUNDS times.
		local S=$R/shards c data qs i url urls pids
		mkdir -p "$S"
		printf 'window: 100\nstages:\n  - type: tfidf\n  - type: bm25\n  - type: length\n' >"$S/lexical.yaml"
		for c in ${SHARDS:-cacm}; do
			data=$O/$c qs=$O/$c
			if [ "$c" = 100k ]; then
				data=$R/scale/100k qs=$O/B-dev
				[ -f "$data/corpus.jsonl" ] || go run ./examples/scalecorpus --xml "$T2" --xml "$DEV" --xml "$E1" --xml "$E2" \
					--docs 100000 --out "$data" >/dev/null
			fi
			rm -rf "$S/$c.idx" "$S/$c"-[0-9].idx
			$SR index --data "$data" --index "$S/$c.idx" >/dev/null
			urls= pids=()
			for i in 0 1 2; do
				$SR index --data "$data" --index "$S/$c-$i.idx" --shard "$i/3" >/dev/null
				$SR serve --index "$S/$c-$i.idx" --pipeline "$S/lexical.yaml" --addr 127.0.0.1:0 >"$S/$c-$i.log" 2>&1 &
				pids+=($!)
			done
			for i in 0 1 2; do
				url=
				while [ -z "$url" ]; do
					sleep 0.2
					url=$(grep -o 'http://[0-9.:]*' "$S/$c-$i.log" | head -1 || true)
				done
				urls=${urls:+$urls,}$url
			done
			$SR bench --index "$S/$c.idx" --pipeline "$S/lexical.yaml" --data "$qs" --remote "$urls" --rounds "${ROUNDS:-3}" 2>/dev/null |
				tee "$S/$c-bench.txt" || true
			kill "${pids[@]}"
			wait "${pids[@]}" 2>/dev/null || true
		done
		;;
	all)
		for s in tweak tweak-cacm concepts-dev concepts-cv deepmatch-a deepmatch-a-cv deepmatch-b deepmatch-b-cv unsup-b unsup-cacm \
			wmd-speed recipe-b recipe-a beir-cacm beir-cacm-unsup bench; do
			run "$s"
		done
		;;
	*)
		echo "unknown section $1" >&2
		exit 2
		;;
	esac
}

[ $# -gt 0 ] || set -- all
for s in "$@"; do
	echo "== $s" >&2
	run "$s"
done
