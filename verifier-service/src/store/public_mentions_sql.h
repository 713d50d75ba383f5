#pragma once

// Which mentions the public sees, as ONE SQL predicate every public read uses: the gateway's
// /mentions (ListMentions with public_only), /api/mentions.jf2, /api/count.json and the change
// feed /api/changes (an entry that fails it is reported deleted). Change it here and every public
// read follows; moderation (issue 16) refines it with the review state and read-time blocks.
//
// `m` is the alias of the `mentions` row. The state equality stays visible to the planner (the
// listing indexes lead with target and state).
#define PORTCULLIS_MENTION_IS_PUBLIC(m) "(" m ".state = 'VERIFIED')"
