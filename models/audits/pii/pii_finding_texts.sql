-- audits.pii_findings (the view's name; the model is named apart from the mart it explains): the
-- findings of pii_findings with their pair's flags, prompt, chosen and rejected, for a reviewer.
-- Run:  dbt show -s pii_finding_texts --limit 20
select
    findings.dataset,
    findings.pair_id,
    findings.side,
    findings.kind,
    findings.category,
    findings.value_md5,
    findings.value_masked,
    findings.n_occurrences,
    pairs.integrity_flags,
    pairs.prompt,
    pairs.chosen,
    pairs.rejected
from {{ ref('pii_findings').include(database=False) }} as findings
inner join {{ ref('preference_pairs').include(database=False) }} as pairs
    on findings.pair_id = pairs.pair_id
