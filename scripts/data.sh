#!/usr/bin/env bash
# Converts the shared SemEval-2016 Task 3 and CACM data into BEIR
# directories under out/data (the layout every experiment in
# docs/RESULTS.md uses). Usage: bash scripts/data.sh [SHARED_DATA_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
S=${1:-../shared/data}
D=$S/semeval2016-task3
O=out/data
mkdir -p out
go build -o out/semrank ./cmd/semrank
sr=out/semrank
T2=$D/SemEval2016-Task3-CQA-QL-train-part2.xml
DEV=$D/SemEval2016-Task3-CQA-QL-dev.xml
E1=$D/SemEval2015-Task3-CQA-QL-train-reformatted-excluding-2016-questions-cleansed.xml
E2=$D/SemEval2015-Task3-CQA-QL-dev-reformatted-excluding-2016-questions-cleansed.xml
$sr convert semeval2016 --xml "$T2" --subtask B --out $O/B-train
$sr convert semeval2016 --xml "$DEV" --subtask B --out $O/B-dev
$sr convert semeval2016 --xml "$T2" --xml "$DEV" --subtask B --out $O/B-all
$sr convert semeval2016 --xml "$T2" --xml "$E1" --xml "$E2" --subtask A --out $O/A-train
$sr convert semeval2016 --xml "$DEV" --subtask A --out $O/A-dev
$sr convert semeval2016 --xml "$T2" --xml "$DEV" --subtask A --out $O/A-all
$sr convert smart --docs $S/cacm/cacm.all --queries $S/cacm/query.text --qrels $S/cacm/qrels.text --out $O/cacm
