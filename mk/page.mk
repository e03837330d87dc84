# The run page as a reader sees it: headless Chromium draws results/reference's
# page (internal/render's TestBrowser, which also checks it), first screen only.

.PHONY: screenshots
screenshots: ## redraw docs/index.png (1440x900) and docs/index-1280.png (1280x800): the reference run's page's first screen in headless Chromium (apt-get install chromium)
	go test ./internal/render -run 'TestBrowser/screenshot' -count=1 -args -screenshot $(CURDIR)/docs/index.png -screenshot-size 1440x900
	go test ./internal/render -run 'TestBrowser/screenshot' -count=1 -args -screenshot $(CURDIR)/docs/index-1280.png -screenshot-size 1280x800
