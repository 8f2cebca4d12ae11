package lambdaapi

import (
	"net/http"
	"strconv"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of the layers' operations (PublishLayerVersion, GetLayerVersion(ByArn),
// ListLayers, ListLayerVersions, DeleteLayerVersion; layers.go of the core).

func (a *api) publishLayerVersion(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		Description             string                `json:"Description"`
		LicenseInfo             string                `json:"LicenseInfo"`
		CompatibleRuntimes      []string              `json:"CompatibleRuntimes"`
		CompatibleArchitectures []string              `json:"CompatibleArchitectures"`
		Content                 platform.CodeLocation `json:"Content"`
	}
	zip, err := a.p.ReadCodeRequest(rc, r, "PublishLayerVersion", []string{"Content", "ZipFile"}, &req)
	if err != nil {
		return response{}, err
	}
	defer zip.Discard() // unless the core adopted it
	code, err := a.p.CodeOf(r.Context(), zip, req.Content, "Content")
	if err != nil {
		return response{}, err
	}
	out, err := a.p.PublishLayerVersion(platform.PublishLayerInput{Region: platform.RequestRegion(r), Name: r.PathValue("layer"), Description: req.Description,
		LicenseInfo: req.LicenseInfo, CompatibleRuntimes: req.CompatibleRuntimes,
		CompatibleArchitectures: req.CompatibleArchitectures, Code: code})
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusCreated, out), nil
}

// layerVersionNumber parses the {version} of a layer version's path.
func layerVersionNumber(r *http.Request) (int64, error) {
	v, err := strconv.ParseInt(r.PathValue("version"), 10, 64)
	if err != nil {
		return 0, &platform.APIError{Status: http.StatusBadRequest, Code: "ValidationException",
			Msg: "1 validation error detected: Value '" + r.PathValue("version") + "' at 'versionNumber' failed to satisfy constraint: Member must be a number"}
	}
	return v, nil
}

func (a *api) getLayerVersion(_ *http.ResponseController, r *http.Request) (response, error) {
	v, err := layerVersionNumber(r)
	if err != nil {
		return response{}, err
	}
	out, err := a.p.GetLayerVersion(platform.RequestRegion(r), r.PathValue("layer"), v)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, out), nil
}

func (a *api) deleteLayerVersion(_ *http.ResponseController, r *http.Request) (response, error) {
	v, err := layerVersionNumber(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.DeleteLayerVersion(platform.RequestRegion(r), r.PathValue("layer"), v); err != nil {
		return response{}, err
	}
	return noContent(), nil
}

func layerFilter(r *http.Request) (platform.LayerFilter, error) {
	q := r.URL.Query()
	f := platform.LayerFilter{Runtime: q.Get("CompatibleRuntime"), Architecture: q.Get("CompatibleArchitecture")}
	return f, platform.CheckLayerFilter(f)
}

func (a *api) listLayerVersions(_ *http.ResponseController, r *http.Request) (response, error) {
	f, err := layerFilter(r)
	if err != nil {
		return response{}, err
	}
	list, next, err := a.p.ListLayerVersions(platform.RequestRegion(r), r.PathValue("layer"), f, r.URL.Query().Get("Marker"), maxItems(r, 50))
	if err != nil {
		return response{}, err
	}
	return page("LayerVersions", list, next), nil
}

// listLayers serves GET /2018-10-31/layers: ListLayers, or GetLayerVersionByArn when the query
// says find=LayerVersion (both operations share the path on Lambda).
func (a *api) listLayers(_ *http.ResponseController, r *http.Request) (response, error) {
	q := r.URL.Query()
	if q.Has("find") {
		if q.Get("find") != "LayerVersion" {
			return response{}, platform.ErrInvalid("find must be LayerVersion")
		}
		out, err := a.p.GetLayerVersionByArn(q.Get("Arn"))
		if err != nil {
			return response{}, err
		}
		return jsonResponse(http.StatusOK, out), nil
	}
	f, err := layerFilter(r)
	if err != nil {
		return response{}, err
	}
	list, next := a.p.ListLayers(platform.RequestRegion(r), f, q.Get("Marker"), maxItems(r, 50))
	return page("Layers", list, next), nil
}
