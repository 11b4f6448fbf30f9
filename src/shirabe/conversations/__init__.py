"""Conversations and feedback, kept per owner in the accounts database of the store.

An owner is a signed-in user (``user:<name>``) or an anonymous browser, known by a random
client id it keeps (``anon:`` and the id's SHA-256, so the id itself is never stored). Every
read and write names the owner, and a conversation of another owner is "not found", never
"forbidden", so ids cannot be probed.

A turn is stored with its answer, its citations and the keys of the documents they cite; the
faces show a stored answer only while its asker may still read every document it cites (see
``shirabe.server.routes.conversations``). Asking a turn again (再生成) keeps each answer as a
version of the turn; the chosen one is the turn's answer, the one shown and the one later
follow-ups are understood after. Editing a turn's question replaces the turn and removes the
turns after it, in one transaction.

Feedback (👍 / 👎 with an optional comment) is given on a stored turn's chosen answer, so the
question, the answer and the citations recorded are the ones shirabe gave, not what a client
claims.

A new conversation is titled after its first question: by the chat model when there is one
(:class:`Titles`), else by the question's key terms (:func:`terms_title`); a title its owner
gave is kept.
"""

from shirabe.conversations.kept import Conversations
from shirabe.conversations.owners import client_owner, user_owner
from shirabe.conversations.titles import Titles, terms_title, title_of

__all__ = ["Conversations", "Titles", "client_owner", "terms_title", "title_of", "user_owner"]
