package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/service"
)

// DataListQuery parses the query of GET /v1/datalist.
func DataListQuery(rawQuery string) (int, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return 0, fmt.Errorf("bad query: %v", err)
	}
	v := q.Get("n")
	if v == "" {
		return 0, errors.New("missing n")
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("n = %q: not an integer", v)
	}
	return n, nil // the range is the core's to check, as for every protocol
}

// DataTypeQuery parses the query of GET /v1/datatype.
func DataTypeQuery(rawQuery string) (groupName, enName string, err error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", "", fmt.Errorf("bad query: %v", err)
	}
	return q.Get("groupName"), q.Get("enName"), nil // required-ness is the core's to check
}

// serverName is what ab and the clients print as "Server Software".
var serverName = []string{"rpcbed-go-server"}

type httpData struct {
	svc   *service.Service
	stall time.Duration // a response write that makes no progress this long is cut
	bufs  sync.Pool
}

func newHTTPData(svc *service.Service, stall time.Duration) *httpData {
	return &httpData{svc: svc, stall: stall, bufs: sync.Pool{New: func() any { return new(bytes.Buffer) }}}
}

// writeChunk is how much of a response one write deadline covers.
const writeChunk = 256 << 10

func httpAuth(r *http.Request) service.Auth {
	return service.Auth{ClientID: r.Header.Get("X-Client-Id"), Token: r.Header.Get("X-Token")}
}

var httpStatus = map[service.Code]int{
	service.InvalidArgument:  http.StatusBadRequest,
	service.Unauthenticated:  http.StatusUnauthorized,
	service.DeadlineExceeded: http.StatusGatewayTimeout,
	service.Unavailable:      http.StatusServiceUnavailable,
}

func writeError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(service.ErrorBody{Code: status, Message: msg})
	w.Header()["Server"] = serverName
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeServiceError(w http.ResponseWriter, err error) {
	status, ok := httpStatus[service.CodeOf(err)]
	if !ok {
		status = http.StatusInternalServerError
	}
	writeError(w, status, err.Error())
}

func (h *httpData) writeJSON(w http.ResponseWriter, token string, v any) {
	buf := h.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer h.bufs.Put(buf)
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	hd := w.Header()
	hd["Server"] = serverName
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	hd.Set("X-Token", token)
	// The body goes out in chunks, each with its own write deadline: a reader that
	// stalls for h.stall is cut (the encoded answer, up to 11 MB, is not held for
	// ever), while a slow reader that keeps reading never is. net/http's
	// WriteTimeout would bound the whole response instead.
	rc := http.NewResponseController(w)
	for b := buf.Bytes(); len(b) > 0; {
		k := min(len(b), writeChunk)
		rc.SetWriteDeadline(time.Now().Add(h.stall))
		if _, err := w.Write(b[:k]); err != nil {
			break
		}
		b = b[k:]
	}
	rc.SetWriteDeadline(time.Time{})
}

func (h *httpData) dataType(w http.ResponseWriter, r *http.Request) {
	group, en, err := DataTypeQuery(r.URL.RawQuery)
	if err != nil {
		h.svc.Stats.Record(service.HTTP, service.CallDataType, err)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := h.svc.DataType(r.Context(), service.HTTP, httpAuth(r), group, en)
	if err != nil {
		writeServiceError(w, err)
		return
	}
	h.writeJSON(w, res.Token, &service.DataTypeBody{Message: "ok", Auth: service.TokenBody{Token: res.Token}, CodeID: res.CodeID, CnName: res.CnName})
}

func (h *httpData) dataList(w http.ResponseWriter, r *http.Request) {
	n, err := DataListQuery(r.URL.RawQuery)
	if err != nil {
		h.svc.Stats.Record(service.HTTP, service.CallDataList, err)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	tok, items, err := h.svc.DataList(r.Context(), service.HTTP, httpAuth(r), n)
	if err != nil {
		writeServiceError(w, err)
		return
	}
	h.writeJSON(w, tok, &service.DataListBody{Message: "ok", Auth: service.TokenBody{Token: tok}, N: n, Items: items})
}
