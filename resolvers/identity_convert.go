package resolvers

import (
	"strings"
	"time"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Mapping from banking types to graph models. Nothing here carries a token
// or key: the only secret the graph ever shows is createApiKey's private key,
// mapped in that resolver.

// personBlock is a person with everything it points to, in one
// allocation: persons come in listings, where a pointer per optional field
// would multiply the allocations of each.
type personBlock struct {
	person model.Person
	strs   [11]string
	times  [3]time.Time
	gender model.Gender
	born   model.Date
}

func toPerson(p *banking.Person) *model.Person {
	if p == nil {
		return nil
	}
	b := new(personBlock)
	s := &b.strs
	*s = [11]string{p.Email, p.Phone, p.OtherPhone, p.Country, p.Nationality, p.Street, p.City, p.Region, p.PostCode, p.Position, loaders.CorporationOf(p)}
	b.person = model.Person{
		GlobalID:             relay.ID(relay.Person, p.ID),
		ID:                   p.ID,
		FirstName:            p.FirstName,
		LastName:             p.LastName,
		Email:                optional(&s[0]),
		Phone:                optional(&s[1]),
		OtherPhone:           optional(&s[2]),
		Country:              optional(&s[3]),
		Nationality:          optional(&s[4]),
		Street:               optional(&s[5]),
		City:                 optional(&s[6]),
		Region:               optional(&s[7]),
		PostCode:             optional(&s[8]),
		Type:                 model.PersonTypeEmployee,
		IsUbo:                p.IsUBO,
		IsDirector:           p.IsDirector,
		Ownership:            p.Ownership,
		Position:             optional(&s[9]),
		IsPoliticallyExposed: p.IsPoliticallyExposed,
		IsTaxResident:        p.IsTaxResident,
		IsBlocked:            p.IsBlocked || (p.DeletedAt != nil && !p.DeletedAt.IsZero()),
		IsInvitationAccepted: p.IsInvitationAccepted,
		IsTwoFactorEnabled:   p.Is2FAEnabled,
		CreatedAt:            timeIn(&b.times[0], p.CreatedAt),
		UpdatedAt:            timeIn(&b.times[1], p.UpdatedAt),
		CorporationID:        optional(&s[10]),
	}
	out := &b.person
	out.Roles = p.RoleIDs()
	out.IsQuestionnaireFilled = p.IsQuestionnaireFilled
	out.PoliticalInstitution = strPtr(p.PoliticalInstitution)
	out.PositionInPoliticalInstitution = strPtr(p.PositionInPoliticalInstitution)
	out.Screening = toPersonScreening(p.ScreeningInfo)
	addPersonDetails(out, p)
	if p.DeletedAt != nil {
		out.BlockedAt = timeIn(&b.times[2], *p.DeletedAt)
	}
	if strings.EqualFold(p.Type, "consumer") {
		out.Type = model.PersonTypeConsumer
	}
	if g, ok := enumOf(model.AllGender, p.Gender); ok {
		b.gender = g
		out.Gender = &b.gender
	}
	if d, err := time.Parse(model.DateLayout, p.DateOfBirth); err == nil {
		b.born = model.Date{Time: d}
		out.DateOfBirth = &b.born
	}
	return out
}

// toPersonScreening maps both of the upstream's shapes: a single person's
// (is_person_under_review, person_profile) and a listing's (status,
// profile).
func toPersonScreening(sc *banking.ScreeningInfo) *model.PersonScreening {
	if sc == nil {
		return nil
	}
	profile := sc.PersonProfile
	if profile == nil {
		profile = sc.Profile
	}
	return &model.PersonScreening{UnderReview: sc.IsPersonUnderReview, Status: strPtr(sc.Status),
		Profile: toScreeningProfile(profile)}
}

func toScreeningProfile(p *banking.ScreeningProfile) *model.ScreeningProfile {
	if p == nil {
		return nil
	}
	return &model.ScreeningProfile{PoliticallyExposed: p.PoliticallyExposed, SanctionsListsEntity: p.SanctionsListsEntity,
		RelativeOrCloseAssociate: p.RelativeOrCloseAssociate, BoardMember: p.BoardMember}
}

func toPersons(list []*banking.Person) []*model.Person {
	out := make([]*model.Person, 0, len(list))
	for _, p := range list {
		out = append(out, toPerson(p))
	}
	return out
}

func toCorporation(c *banking.Corporation) *model.Corporation {
	if c == nil {
		return nil
	}
	out := &model.Corporation{
		GlobalID:    relay.ID(relay.Corporation, c.ID),
		ID:          c.ID,
		Name:        c.Name,
		Email:       strPtr(c.Email),
		Address:     strPtr(c.Address),
		City:        c.City,
		Region:      c.Region,
		PostCode:    c.PostCode,
		Country:     strPtr(c.Country),
		Currency:    strPtr(c.Currency),
		IsOnboarded: c.IsOnboarded,
		OnboardedAt: timePtr(c.OnboardedAt),
		CreatedAt:   timePtr(c.CreatedAt),
	}
	if c.Identity != nil {
		out.IsKycVerified = c.Identity.IsKYCVerified
		out.IsQuestionnaireFilled = c.Identity.IsQuestionnaireFilled
	}
	if sc := c.OverallScreeningInfo; sc != nil {
		out.OverallScreeningInfo = &model.CorporationScreening{UnderReview: sc.IsCorporationUnderReview,
			CorporationProfile: toScreeningProfile(sc.CorporationProfile), CorporateUsersProfile: toScreeningProfile(sc.CorporateUsersProfile)}
	}
	if c.DeletedAt != nil {
		out.BlockedAt = timePtr(*c.DeletedAt)
	}
	addCorporationDetails(out, c)
	return out
}

func toSettings(s *banking.CorporationSettings) *model.CorporationSettings {
	out := &model.CorporationSettings{CorporationID: s.ID, UpdatedAt: timePtr(s.UpdatedAt), CreatedAt: timePtr(s.CreatedAt)}
	hasEmployee := false
	for _, t := range s.AllowedPersonTypes {
		pt := model.PersonType(strings.ToUpper(t))
		if pt.IsValid() {
			out.AllowedPersonTypes = append(out.AllowedPersonTypes, pt)
			hasEmployee = hasEmployee || pt == model.PersonTypeEmployee
		}
	}
	if !hasEmployee {
		out.AllowedPersonTypes = append([]model.PersonType{model.PersonTypeEmployee}, out.AllowedPersonTypes...)
	}
	return out
}

func toTwoFactor(tf *banking.TwoFactor) *model.TwoFactorChallenge {
	out := &model.TwoFactorChallenge{MaskedPhone: tf.TruncatedPhone, ChallengeID: strPtr(tf.ChallengeID)}
	if at := tf.ExpiresAt(); !at.IsZero() {
		out.ExpiresAt = &at
	}
	return out
}

func toViewer(s *session.Session) *model.Viewer {
	return &model.Viewer{Kind: model.PrincipalKind(s.Kind), CsrfToken: s.CSRFToken}
}

func timePtr(t banking.Timestamp) *time.Time {
	if t.IsZero() {
		return nil
	}
	v := t.UTC()
	return &v
}

// timeIn is timePtr into a time the caller allocated with its model.
func timeIn(dst *time.Time, t banking.Timestamp) *time.Time {
	if t.IsZero() {
		return nil
	}
	*dst = t.UTC()
	return dst
}
