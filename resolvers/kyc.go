package resolvers

import (
	"context"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// KYC documents of a corporation: mapping, upload (checked by kyc_format.go
// before anything is sent) and update.

func toKYCDocument(d *banking.KYCDocument, corporationID string) *model.KycDocument {
	out := &model.KycDocument{GlobalID: relay.ID(relay.KycDocument, corporationID, d.ID), ID: d.ID, Name: d.Name, Type: d.Type, CreatedAt: timePtr(d.CreatedAt),
		UpdatedAt: timePtr(d.UpdatedAt), CorporationID: corporationID}
	switch d.VerifyingStatus {
	case banking.KYCVerified:
		out.Status = model.KycDocumentStatusVerified
	case banking.KYCNotVerified:
		out.Status = model.KycDocumentStatusNotVerified
	default:
		out.Status = model.KycDocumentStatusNoMark
	}
	if d.Path != "" {
		out.Path = &d.Path
	}
	addKYCDetails(out, d)
	if d.ExpirationAt != nil {
		var dt model.Date
		if dt.UnmarshalGQL(*d.ExpirationAt) == nil {
			out.ExpiresAt = &dt
		}
	}
	return out
}

var kycStatusWire = map[model.KycDocumentStatus]string{
	model.KycDocumentStatusNoMark:      banking.KYCNoMark,
	model.KycDocumentStatusVerified:    banking.KYCVerified,
	model.KycDocumentStatusNotVerified: banking.KYCNotVerified,
}

// uploadKYC checks an uploaded file by size and content, then streams it
// upstream. A refused file is never sent; gqlgen removes its temporary file
// when the request ends.
func (r *Resolver) uploadKYC(ctx context.Context, in model.UploadKycDocumentInput) (*model.KycDocument, error) {
	corpID, err := actingCorporation(ctx, in.CorporationID)
	if err != nil {
		return nil, err
	}
	f := in.File
	if f.File == nil || f.Size <= 0 {
		return nil, gqlerr.BadInput("input.file", "input.file is empty")
	}
	if f.Size > MaxKYCFileBytes {
		return nil, gqlerr.BadInput("input.file", "input.file must be at most %d MiB", MaxKYCFileBytes>>20)
	}
	format, ok := detectKYCFormat(&seekerReaderAt{rs: f.File}, f.Size)
	if !ok {
		return nil, gqlerr.BadInput("input.file", "input.file must be a JPEG, PNG, PDF, DOC, DOCX, XLS or XLSX file (recognised by its content, not its name)")
	}
	name, err := kycFileName(f.Filename, format)
	if err != nil {
		return nil, err
	}
	if _, err := f.File.Seek(0, io.SeekStart); err != nil {
		return nil, gqlerr.InternalError(err)
	}
	// The fingerprint names the file by its name, size and type, not its
	// content: a retry sends the same upload.
	doc, _, err := createOnce(ctx, r, "kyc-document", in.IdempotencyKey, fingerprintOf(corpID, name, f.Size, in.Type),
		func(ctx context.Context) (string, *banking.KYCDocument, error) {
			doc, err := r.Banking.KYC.Upload(ctx, corpID, &banking.KYCUpload{
				Filename:    name,
				ContentType: format.mediaType,
				File:        io.LimitReader(f.File, f.Size),
				Type:        strings.ToLower(string(in.Type)),
			})
			if err != nil {
				return "", nil, err
			}
			return doc.ID, doc, nil
		})
	if err != nil {
		return nil, recordError(err)
	}
	return toKYCDocument(doc, corpID), nil
}

func (r *Resolver) updateKYC(ctx context.Context, in model.UpdateKycDocumentInput) (*model.KycDocument, error) {
	s, err := mustSession(ctx)
	if err != nil {
		return nil, err
	}
	corpID, err := actingCorporation(ctx, in.CorporationID)
	if err != nil {
		return nil, err
	}
	var v validator
	v.required("input.id", in.ID, 100)
	v.optional("input.name", in.Name, 255)
	if v.err != nil {
		return nil, v.err
	}
	if in.Name != nil {
		if err := checkFileName("input.name", *in.Name); err != nil {
			return nil, err
		}
	}
	req := &banking.KYCUpdateRequest{Name: in.Name}
	if in.ExpiresAt != nil {
		d := in.ExpiresAt.Format("2006-01-02")
		req.ExpirationAt = &d
	}
	if in.Status != nil {
		if s.Kind != session.Staff {
			return nil, &gqlerr.Error{Code: gqlerr.Forbidden, Field: "input.status",
				Message: "only staff members verify KYC documents"}
		}
		w := kycStatusWire[*in.Status]
		req.VerifyingStatus = &w
	}
	if in.Name != nil {
		if err := keepsKYCType(ctx, corpID, in.ID, *in.Name); err != nil {
			return nil, err
		}
	}
	doc, err := r.Banking.KYC.Update(ctx, corpID, in.ID, req)
	if err != nil {
		return nil, err
	}
	if in.Status != nil {
		r.announceChange(ctx, events.KycDocumentStatusChanged, corpID, relay.ID(relay.KycDocument, corpID, doc.ID), events.KYCDocumentVersion(doc),
			map[string]any{"document_id": doc.ID, "status": doc.VerifyingStatus})
	}
	return toKYCDocument(doc, corpID), nil
}

// keepsKYCType refuses a new name of document id whose extension is not of
// the document's type: an upload's name must agree with its content, and a
// rename must not undo that (a PDF/HTML polyglot uploaded as ".pdf",
// renamed ".html"). The type is the one the current name gives, as its
// upload was checked against it; a document of a type the gateway does not
// name keeps its extension. A document the corporation's listing does not
// hold is left to the upstream's answer.
func keepsKYCType(ctx context.Context, corpID, id, name string) error {
	docs, err := loaders.For(ctx).CorporationKYC.Get(ctx, corpID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(docs, func(d *banking.KYCDocument) bool { return d.ID == id })
	if i < 0 {
		return nil
	}
	current := strings.ToLower(path.Ext(docs[i].Name))
	exts := []string{current}
	for _, f := range []kycFormat{kycJPEG, kycPNG, kycPDF, kycDOC, kycXLS, kycDOCX, kycXLSX} {
		if slices.Contains(f.exts, current) {
			exts = f.exts
		}
	}
	if !slices.Contains(exts, strings.ToLower(path.Ext(name))) {
		return gqlerr.BadInput("input.name", "input.name must keep the document's type: end it in %s", strings.Join(exts, " or "))
	}
	return nil
}
