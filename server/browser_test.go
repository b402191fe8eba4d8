package server

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium returns the Chromium binary: $SEMRANK_CHROMIUM, Debian's
// /usr/bin/chromium, or one on $PATH; "" when there is none.
func chromium() string {
	for _, p := range []string{os.Getenv("SEMRANK_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// pageHit is what the page shows of one hit.
type pageHit struct {
	ID    string `json:"id"`
	Rank  string `json:"rank"`
	Move  string `json:"move"`
	Title string `json:"title"`
	Bars  int    `json:"bars"`
	Marks int    `json:"marks"` // highlighted words in the snippet
}

type pageLists struct {
	First    []pageHit `json:"first"`
	Reranked []pageHit `json:"reranked"`
	Status   string    `json:"status"`
}

// collectJS reads both lists off the page.
const collectJS = `(() => {
  const read = (sel) => [...document.querySelectorAll(sel + " li.hit")].map((li) => ({
    id: li.dataset.id, rank: li.querySelector(".rank").textContent,
    move: li.querySelector(".move").textContent, title: li.querySelector(".title").textContent,
    bars: li.querySelectorAll(".bar").length, marks: li.querySelectorAll(".snippet mark").length }));
  return { first: read("#first"), reranked: read("#reranked"), status: document.getElementById("status").textContent };
})()`

// TestBrowser drives the web page in headless Chromium: it types a query,
// submits it, and checks the reranked list is the API's, with movement
// markers and stage score bars, and that clicking a hit explains it.
func TestBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium binary (looked for $SEMRANK_CHROMIUM, /usr/bin/chromium, chromium on $PATH); " +
			"install it with .ci/install-chromium.sh (apt-get install -y chromium) to run the browser test")
	}
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, func(c *Config) { c.Examples = []string{"best bank in Doha"} })
	const query = "which bank is best to open an account in Doha"

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1100),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()

	err := chromedp.Do(bctx,
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#examples button")),
		chromedp.SendKeys(chromedp.ID("q"), query),
		chromedp.Click(chromedp.ID("go")),
		chromedp.WaitVisible(chromedp.CSS("#reranked li.hit")),
	)
	if err != nil {
		t.Fatalf("driving the page: %v", err)
	}
	info, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("info")))
	if err != nil {
		t.Fatal(err)
	}
	page, err := chromedp.Run(bctx, chromedp.Evaluate[pageLists](collectJS))
	if err != nil {
		t.Fatalf("reading the lists: %v", err)
	}
	if !strings.Contains(info, "500 documents") || !strings.Contains(info, "tfidf, overlap") {
		t.Errorf("info line %q", info)
	}

	// The page shows what the API answers for the same request.
	var api SearchResponse
	call(t, "POST", ts.URL+"/api/search", SearchRequest{Query: jsonString(query), Size: intp(10), Rerank: &RerankOptions{Compare: true}}, &api)
	if len(page.Reranked) != len(api.Hits) || len(page.First) != len(api.FirstStage) || len(api.Hits) != 10 {
		t.Fatalf("page shows %d reranked and %d first-stage hits; the API answers %d and %d",
			len(page.Reranked), len(page.First), len(api.Hits), len(api.FirstStage))
	}
	// Both lists mark the query's words in their snippets.
	for name, list := range map[string][]pageHit{"first-stage": page.First, "reranked": page.Reranked} {
		marks := 0
		for _, h := range list {
			marks += h.Marks
		}
		if marks < len(list) {
			t.Errorf("%s list: %d highlighted words in %d snippets", name, marks, len(list))
		}
	}
	moved := 0
	for i, h := range page.Reranked {
		a := api.Hits[i]
		if h.ID != a.ID || h.Rank != strconv.Itoa(a.Rank) || h.Bars != 3 { // first stage + tfidf + overlap
			t.Errorf("reranked %d: page %+v, API %s rank %d", i, h, a.ID, a.Rank)
		}
		wantMove := "="
		switch d := a.FirstStageRank - a.Rank; {
		case d > 0:
			wantMove = "▲ " + strconv.Itoa(d)
		case d < 0:
			wantMove = "▼ " + strconv.Itoa(-d)
		}
		if h.Move != wantMove {
			t.Errorf("reranked %d (%s): marker %q, want %q (first-stage rank %d)", i, h.ID, h.Move, wantMove, a.FirstStageRank)
		}
		if wantMove != "=" {
			moved++
		}
	}
	if moved == 0 {
		t.Error("no hit moved: the test query should show reranking")
	}
	for i, h := range page.First {
		if h.ID != api.FirstStage[i].ID || !strings.Contains(h.Move, "→"+strconv.Itoa(api.FirstStage[i].RerankedRank)) {
			t.Errorf("first stage %d: page %+v, API %+v", i, h, api.FirstStage[i])
		}
	}
	if !strings.Contains(page.Status, "matching documents") {
		t.Errorf("status %q", page.Status)
	}

	// SEMRANK_SCREENSHOT=file.png saves the page, for looking at it.
	if path := os.Getenv("SEMRANK_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Clicking a hit explains it.
	err = chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#reranked li.hit")), chromedp.WaitVisible(chromedp.ID("explain")))
	explain, err2 := chromedp.Run(bctx, chromedp.Text(chromedp.ID("explain-body")))
	if err = errors.Join(err, err2); err != nil {
		t.Fatalf("opening the explanation: %v", err)
	}
	for _, want := range []string{api.Hits[0].ID, "stage tfidf", "stage overlap", "semrank rerank of first-stage rank", "fieldWeight(_all:bank), as per bm25 model"} {
		if !strings.Contains(explain, want) {
			t.Errorf("explanation lacks %q:\n%s", want, explain)
		}
	}

	// With reranking off the page says so and lists the first stage only.
	err = chromedp.Do(bctx,
		chromedp.Click(chromedp.ID("close")),
		chromedp.Click(chromedp.ID("rerank")),
		chromedp.Click(chromedp.ID("go")),
		chromedp.WaitVisible(chromedp.CSS("#reranked li.empty")),
	)
	off, err2 := chromedp.Run(bctx, chromedp.Text(chromedp.ID("reranked")))
	if err = errors.Join(err, err2); err != nil || !strings.Contains(off, "reranking is off") {
		t.Errorf("rerank off: %q %v", off, err)
	}
}
