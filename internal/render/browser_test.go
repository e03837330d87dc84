package render

// The run page in a real browser: headless Chromium (Debian's chromium package)
// renders a real run's index.html, and the test checks what a reader would see.
// It skips when Chromium is missing, unless RPCBED_REQUIRE contains "chromium".

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/rpcbed/rpcbed/internal/testbed"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
)

var (
	screenshotOut  = flag.String("screenshot", "", "TestBrowser: also write the page's screenshot (PNG) to this file (docs/index.png)")
	screenshotSize = flag.String("screenshot-size", "1280x900", "TestBrowser: the browser window, WIDTHxHEIGHT")
)

// chromium finds the browser or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if strings.Contains(os.Getenv("RPCBED_REQUIRE"), "chromium") {
		t.Fatal("RPCBED_REQUIRE has chromium, but no chromium is on PATH (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install chromium)")
	return ""
}

// browserFlags keep headless Chromium off the network (the machine refuses
// background connections) and out of the user's profile.
func browserFlags(profile string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
		"--disable-extensions", "--hide-scrollbars", "--mute-audio", "--user-data-dir=" + profile}
}

// startBrowser runs bin with extra arguments in its own process group, killed
// (the group, by its id) when the test ends.
func startBrowser(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		once.Do(func() {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
			}
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		})
	})
}

// referencePage renders the committed reference run's page into a directory of
// its own and returns the run and the page's file.
func referencePage(t *testing.T) (*results.Run, string) {
	t.Helper()
	return committedPage(t, "reference")
}

// committedPage renders the page of the committed run results/NAME into a
// directory of its own and returns the run and the page's file.
func committedPage(t *testing.T, name string) (*results.Run, string) {
	t.Helper()
	dir := filepath.Join("..", "..", "results", name)
	run, err := results.LoadRun(dir)
	if err != nil {
		t.Fatalf("the committed run %s: %v", name, err)
	}
	x, err := LoadExtras(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Index(&b, run, x); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), IndexFile)
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return run, file
}

func TestBrowser(t *testing.T) {
	bin := chromium(t)
	run, page := referencePage(t)
	url := "file://" + page

	t.Run("dump-dom", func(t *testing.T) {
		checkRunPage(t, parseHTML(t, dumpDOM(t, bin, url)), run)
	})

	t.Run("compare page", func(t *testing.T) {
		// The reference against itself with one cell made 1.5 times faster.
		b := *run
		b.Cells = slices.Clone(run.Cells)
		c := &b.Cells[0]
		c.Repeats = slices.Clone(c.Repeats)
		for i := range c.Repeats {
			c.Repeats[i].Metrics.RPS *= 1.5
		}
		var page bytes.Buffer
		if err := CompareHTML(&page, run, &b, analysis.Compare(run, &b)); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "compare.html")
		if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		doc := parseHTML(t, dumpDOM(t, bin, "file://"+file))
		rows := findAll(doc, func(n *html.Node) bool { _, ok := attr(n, "data-cell"); return n.Data == "tr" && ok })
		if len(rows) != len(run.Cells) {
			t.Errorf("compare page: got %d rows; want %d", len(rows), len(run.Cells))
		}
	})

	t.Run("screenshot and sort", func(t *testing.T) {
		w, h, err := parseSize(*screenshotSize)
		if err != nil {
			t.Fatal(err)
		}
		b := newCDP(t, bin)
		sess := b.open(t, url, w, h)

		shot := b.screenshot(t, sess)
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if sz := img.Bounds().Size(); sz.X != w || sz.Y != h {
			t.Errorf("screenshot: got %v; want %dx%d", sz, w, h)
		}
		if ink, colours := inkAndColours(img); ink < 0.02 || colours < 8 {
			t.Errorf("screenshot looks blank: %.1f %% of pixels differ from the background, %d colours", ink*100, colours)
		}
		if *screenshotOut != "" {
			if err := os.WriteFile(*screenshotOut, shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}

		// Clicking a header sorts its table: rows before and after, by req/s.
		const table = `document.querySelector("table.cells")`
		order := func() []string {
			var v []string
			b.eval(t, sess, `Array.from(`+table+`.tBodies[0].rows, r => r.dataset.cell)`, &v)
			return v
		}
		before := order()
		col := slices.IndexFunc(cellColumns, func(c column) bool { return c.Head == "req/s" }) + 1
		var pt struct{ X, Y float64 }
		b.eval(t, sess, fmt.Sprintf(`(() => { const th = %s.tHead.rows[0].cells[%d]; th.scrollIntoView({block: "center"});
			const r = th.getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2}; })()`, table, col), &pt)
		b.click(t, sess, pt.X, pt.Y)
		after := order()
		if slices.Equal(before, after) || len(after) != len(before) {
			t.Fatalf("clicking the req/s header did not reorder the rows:\nbefore %v\nafter  %v", before, after)
		}
		var rps []float64
		b.eval(t, sess, `Array.from(`+table+`.tBodies[0].rows, r => parseFloat(r.cells[`+strconv.Itoa(col)+`].dataset.v || "NaN"))`, &rps)
		if !slices.IsSorted(rps) {
			t.Errorf("after one click, req/s is not ascending: %v", rps)
		}
		b.click(t, sess, pt.X, pt.Y)
		b.eval(t, sess, `Array.from(`+table+`.tBodies[0].rows, r => parseFloat(r.cells[`+strconv.Itoa(col)+`].dataset.v || "NaN"))`, &rps)
		slices.Reverse(rps)
		if !slices.IsSorted(rps) {
			t.Errorf("after a second click, req/s is not descending: %v", rps)
		}
		// The DOM the browser ends with still holds every cell and plot.
		var dom string
		b.eval(t, sess, `document.documentElement.outerHTML`, &dom)
		checkRunPage(t, parseHTML(t, []byte(dom)), run)
		checkAnswersGridFilterWidth(t, b, url)
		b.close()
	})

	t.Run("TLS run's page width", func(t *testing.T) {
		// The committed MATRIX=tls run: four ratios a row beside cell names such as
		// php-pure-thrift-datalist-200-c50@tls+percall ran to 1630 px once.
		_, file := committedPage(t, "reference-tls")
		b := newCDP(t, bin)
		checkAnswersGridFilterWidth(t, b, "file://"+file)
		b.close()
	})
}

// checkAnswersGridFilterWidth checks, in a 1400 px window: the answers open the
// page; the verdict grids colour faster, slower and indistinguishable apart and
// mark flagged cells; no table is wider than the window (the note column
// reachable without scrolling sideways); and the filter hides every row and
// column of another client or size, in every table.
func checkAnswersGridFilterWidth(t *testing.T, b *cdp, url string) {
	sess := b.open(t, url, 1400, 900)
	var first string
	b.eval(t, sess, `document.querySelector("section#answers .answer").id`, &first)
	if first != "answer-language" {
		t.Errorf("the page opens with %q; want the caller's language answer", first)
	}
	var colours map[string]string
	b.eval(t, sess, `(() => { const o = {}; for (const v of ["faster", "slower", "indistinguishable"]) {
		const td = document.querySelector("table.vgrid td.verdict-" + v); o[v] = td ? getComputedStyle(td).backgroundColor : ""; } return o; })()`, &colours)
	if colours["faster"] == "" || colours["slower"] == "" || colours["indistinguishable"] == "" ||
		colours["faster"] == colours["slower"] || colours["faster"] == colours["indistinguishable"] || colours["slower"] == colours["indistinguishable"] {
		t.Errorf("verdict grid colours: got %v; want three distinct backgrounds", colours)
	}
	var grids struct{ Grids, Flagged int }
	b.eval(t, sess, `({Grids: document.querySelectorAll("#grids table.vgrid").length, Flagged: document.querySelectorAll("table.vgrid td.flagged .flag").length})`, &grids)
	if grids.Grids < 2 || grids.Flagged == 0 {
		t.Errorf("verdict grids: got %+v; want client-vs-go and protocol-vs-grpc grids with flagged cells marked", grids)
	}
	var wide []string
	b.eval(t, sess, `Array.from(document.querySelectorAll("table"), t => [t.id || t.className, Math.ceil(t.getBoundingClientRect().right)])
		.filter(([, r]) => r > 1400).map(([n, r]) => n + " ends at " + r + " px")`, &wide)
	if len(wide) > 0 {
		t.Errorf("tables wider than 1400 px: %v", wide)
	}
	var sw int
	b.eval(t, sess, `document.documentElement.scrollWidth`, &sw)
	if sw > 1400 {
		t.Errorf("the page scrolls sideways at 1400 px: %d px wide", sw)
	}
	var left struct{ Visible, Other, GridRows, GridOther, Cols int }
	b.eval(t, sess, `(() => {
		const set = (k, v) => { const s = document.querySelector("select[data-filter=" + k + "]"); s.value = v; s.dispatchEvent(new Event("change", {bubbles: true})); };
		set("client", "php"); set("items", "200");
		const shown = el => el.offsetParent !== null;
		const rows = Array.from(document.querySelectorAll("section[id^=client-] table.cells tbody tr")).filter(shown);
		const grid = Array.from(document.querySelectorAll("table.vgrid tbody tr[data-client]")).filter(shown);
		const cols = Array.from(document.querySelectorAll("table.vgrid thead th[data-items]")).filter(shown);
		return {Visible: rows.length, Other: rows.filter(r => r.dataset.client !== "php" || r.dataset.items !== "200").length,
			GridRows: grid.length, GridOther: grid.filter(r => r.dataset.client !== "php").length,
			Cols: cols.filter(th => th.dataset.items !== "200").length};
	})()`, &left)
	if left.Visible == 0 || left.Other != 0 || left.GridRows == 0 || left.GridOther != 0 || left.Cols != 0 {
		t.Errorf("filter client=php, items=200: got %+v; want php's 200-item rows and columns only", left)
	}
}

// dumpDOM is the DOM Chromium holds once url has loaded and its scripts ran.
func dumpDOM(t *testing.T, bin, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append(browserFlags(t.TempDir()), "--dump-dom", url)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, lastLines(errb.String(), 10))
	}
	return out.Bytes()
}

func parseSize(s string) (int, int, error) {
	ws, hs, ok := strings.Cut(s, "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w < 100 || h < 100 || w > 8000 || h > 20000 {
		return 0, 0, fmt.Errorf("-screenshot-size %q: want WIDTHxHEIGHT", s)
	}
	return w, h, nil
}

// inkAndColours is the share of pixels that are not the most common colour, and
// how many colours the image has (capped at 1000).
func inkAndColours(img image.Image) (float64, int) {
	counts := map[uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			k := r>>8<<16 | g>>8<<8 | bl>>8
			if len(counts) < 1000 || counts[k] > 0 {
				counts[k]++
			}
		}
	}
	top, total := 0, b.Dx()*b.Dy()
	for _, n := range counts {
		top = max(top, n)
	}
	return 1 - float64(top)/float64(total), len(counts)
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// cdp is a DevTools protocol client over --remote-debugging-pipe: Chromium reads
// NUL-terminated JSON messages on its fd 3 and writes them on its fd 4.
type cdp struct {
	w      io.WriteCloser
	mu     sync.Mutex
	next   int
	wait   map[int]chan cdpMsg
	events chan cdpMsg
	stderr *testbed.SyncBuffer
}

type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func newCDP(t *testing.T, bin string) *cdp {
	t.Helper()
	toBrowser, ourW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ourR, fromBrowser, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &cdp{w: ourW, wait: map[int]chan cdpMsg{}, events: make(chan cdpMsg, 256), stderr: &testbed.SyncBuffer{}}
	cmd := exec.Command(bin, append(browserFlags(t.TempDir()), "--remote-debugging-pipe", "about:blank")...)
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser} // fd 3, fd 4
	cmd.Stderr = c.stderr
	startBrowser(t, cmd)
	toBrowser.Close()
	fromBrowser.Close()
	t.Cleanup(func() { ourW.Close(); ourR.Close() })
	go func() {
		br := bufio.NewReader(ourR)
		for {
			b, err := br.ReadBytes(0)
			if err != nil {
				c.mu.Lock()
				for id, ch := range c.wait {
					close(ch)
					delete(c.wait, id)
				}
				c.mu.Unlock()
				return
			}
			var m cdpMsg
			if json.Unmarshal(b[:len(b)-1], &m) != nil {
				continue
			}
			if m.ID == 0 {
				select {
				case c.events <- m:
				default: // nobody waits for that many events
				}
				continue
			}
			c.mu.Lock()
			ch := c.wait[m.ID]
			delete(c.wait, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}()
	return c
}

// call sends one command (to the browser when session is "") and decodes its result.
func (c *cdp) call(t *testing.T, session, method string, params any, result any) {
	t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan cdpMsg, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	p, _ := json.Marshal(params)
	msg, _ := json.Marshal(cdpMsg{ID: id, Method: method, SessionID: session, Params: p})
	if _, err := c.w.Write(append(msg, 0)); err != nil {
		t.Fatalf("%s: %v\n%s", method, err, lastLines(c.stderr.String(), 10))
	}
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the browser closed the pipe\n%s", method, lastLines(c.stderr.String(), 10))
		}
		if m.Error != nil {
			t.Fatalf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				t.Fatalf("%s: %v", method, err)
			}
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no answer in 30 s\n%s", method, lastLines(c.stderr.String(), 10))
	}
}

// open loads url in a new page of w x h pixels and waits until it has loaded.
func (c *cdp) open(t *testing.T, url string, w, h int) string {
	t.Helper()
	var target struct{ TargetID string }
	c.call(t, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct{ SessionID string }
	c.call(t, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	s := att.SessionID
	c.call(t, s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false}, nil)
	c.call(t, s, "Page.navigate", map[string]any{"url": url}, nil)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var state string
		c.eval(t, s, "document.readyState", &state)
		if state == "complete" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not loaded in 30 s (readyState %q)", url, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eval runs a JavaScript expression in the page and decodes its value.
func (c *cdp) eval(t *testing.T, session, expr string, v any) {
	t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	c.call(t, session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if r.ExceptionDetails != nil {
		t.Fatalf("%s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if err := json.Unmarshal(r.Result.Value, v); err != nil {
		t.Fatalf("%s: %v (value %s)", expr, err, r.Result.Value)
	}
}

// click presses and releases the left mouse button at x, y: a real click, as
// the page's listeners see one.
func (c *cdp) click(t *testing.T, session string, x, y float64) {
	t.Helper()
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		p := map[string]any{"type": typ, "x": x, "y": y}
		if typ != "mouseMoved" {
			p["button"], p["clickCount"] = "left", 1
		}
		c.call(t, session, "Input.dispatchMouseEvent", p, nil)
	}
}

func (c *cdp) screenshot(t *testing.T, session string) []byte {
	t.Helper()
	var r struct{ Data string }
	c.call(t, session, "Page.captureScreenshot", map[string]any{"format": "png"}, &r)
	b, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// close asks the browser to quit; the process group is killed at cleanup anyway.
func (c *cdp) close() {
	msg, _ := json.Marshal(cdpMsg{ID: 1 << 30, Method: "Browser.close"})
	if _, err := c.w.Write(append(msg, 0)); err != nil && !errors.Is(err, os.ErrClosed) {
		return
	}
}
