"""The lexicon: how the agent reads the words of a question and of a schema's names.

One stemmer (:func:`stem`, through :func:`words` and :func:`roots`), one stop list
(:data:`STOP_WORDS`, through :func:`content_words`), the word lists the rules read by
(words that ask rather than name, codes that are everyday words, id words, the columns of
a person's first and last name, the wording of a question that excludes, leaves a value
out, asks for an average or ranks), and how a question names a stored value (:func:`value_named`: as
words, or as a code it spells out) and which stored values are worth looking for in it
(:func:`nameable`).

Everything here reads English wording; the rules that use it live in
:mod:`sqlnb.agent.repairs` (rewrites of a draft) and :mod:`sqlnb.agent.checks` (what
lowers an answer's confidence), the schema context's table choice in
:mod:`sqlnb.agent.context` and the memory's similarity in :mod:`sqlnb.agent.memory`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable

# ---------------------------------------------------------------------------
# the stemmer
# ---------------------------------------------------------------------------

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """The root of one lower-case word, the same for a noun's singular and plural
    (category/categories, class/classes, course/courses, box/boxes): a final "ies"
    becomes "y", then a final "s" (not "ss") goes, then a final "e", each only from a
    word longer than three letters."""
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def tokens(text: str | None) -> list[str]:
    """The words of ``text`` in lower case, in order, repeats kept: split on anything but
    letters and digits, on underscores and between camelCase parts."""
    return _WORD.findall(_CAMEL.sub(r"\1 \2", text or "").lower())


def words(text: str | None) -> list[str]:
    """The stems (:func:`stem`) of ``text``'s :func:`tokens`."""
    return [stem(w) for w in tokens(text)]


def roots(text: str | None) -> set[str]:
    """The set of :func:`words` of ``text``."""
    return set(words(text))


# ---------------------------------------------------------------------------
# the stop list
# ---------------------------------------------------------------------------


def _word_list(text: str) -> frozenset[str]:
    """The words of ``text``, a word list written as data (white space between words)."""
    return frozenset(text.split())


def listed(word: str, word_list: frozenset[str]) -> bool:
    """Whether the lower-case ``word`` is in ``word_list`` as written or as a plural ("s")
    of a word there.  A word list is matched word by word, not stem by stem: two words of
    one stem are not always both on a list (a stop word's stem can be a content word's)."""
    return word in word_list or (word.endswith("s") and word[:-1] in word_list)


# words of a question that say nothing about which tables or rows it is about
STOP_WORDS = _word_list("""
a an and are as at be by can do does each every find for from give had has have how i in
is it its list me many much my name names number of on or per please return show that the
their them then there these this those to total was were what when where which who whose
with without all any both more most than top only also whom you your we our ones one
get count""")


def content_words(text: str | None) -> list[str]:
    """The stems of ``text``'s words that are not stop words (:data:`STOP_WORDS`, each
    also as a plural: :func:`listed`), in order, repeats kept."""
    return [stem(w) for w in tokens(text) if not listed(w, STOP_WORDS)]


# SQL's own words: a stored query's words that say nothing about what it is about
SQL_WORDS = _word_list("""
select from where group by order having join left right inner outer full cross on as and or
not null is in limit offset distinct case when then else end asc desc with union all except
intersect count sum avg min max cast like ilike between exists coalesce over partition
true false interval date extract nulls first last using lateral filter round
""")


def sql_content_words(sql: str | None) -> list[str]:
    """The stems of a query's words that are not SQL's own (:data:`SQL_WORDS`, also as a
    plural) nor numbers, in order, repeats kept."""
    return [stem(w) for w in tokens(sql) if not listed(w, SQL_WORDS) and not w.isdigit()]


# ---------------------------------------------------------------------------
# word lists
# ---------------------------------------------------------------------------

# words of a question that say what to do, not which rows: never read as a code's long form
ASKING_WORDS = _word_list("""
    show list give find return display tell name names what which whose where when who how
    many much number numbers count total totals average sum first last least most more less
    than each every their there these those with without from that have been does done
    highest lowest largest smallest longest shortest fewest greatest order ordered sorted
    descending ascending rank ranked group grouped listed given shown different distinct
    all both either also only other others same per along
""")

# Codes that are also everyday English words (a country code 'IN' or 'NO', a container
# 'CAN'): in a question the word is usually English, so such a code counts as named only
# where the question writes it as stored, in capitals, or as a plural noun.
WORD_CODES = _word_list("""
    am an as at be by do go he if in is it me my no of on or so to up us we
    and are can for had has its not our the was who
""")
# words whose initial does not start a two-letter code read as initials
NOT_INITIALS = ASKING_WORDS | WORD_CODES

# words that say a question asks for an identifier itself, not for what it identifies
ID_WORDS = frozenset({"id", "ids", "identifier", "identifiers"})

# column names (lower case, without underscores) of a person's first and last name
FIRST_NAME_COLUMNS = frozenset({"firstname", "fname", "givenname", "forename"})
LAST_NAME_COLUMNS = frozenset({"lastname", "lname", "surname", "familyname"})

# words of a stored value too common to show that a question names the value
FILLER_WORDS = frozenset({"the", "and", "for", "with", "from", "not", "all", "any", "per"})

# a question that excludes or negates something: a value it names may be one to leave out
EXCLUDING = re.compile(
    r"\b(?:not|never|no|non|nor|without|except|excluding|exclude|other than|apart from)\b"
    r"|n't\b",
    re.I,
)
# the words that leave out what follows them ("not refunded", "without a discount")
NEGATIONS = frozenset({"not", "non", "never", "no", "without", "excluding", "except", "nor"})
# where a question starts naming the rows an average is taken over
AVERAGE_WORD = re.compile(r"\b(?:average|mean)\b", re.I)
# words of a question that leave rows out: a query accounts for them with a negation, an
# inequality, an IS NULL, an EXCEPT or a comparison with 0 / 'N' / false
LEAVING_OUT_WORDS = NEGATIONS | _word_list("""
    exclude excluded excludes none neither leave leaving left out outside apart besides cannot
""")
# words of a question that compare: a query accounts for them with <, <=, >, >= or BETWEEN
COMPARING_WORDS = _word_list("""
    after before later earlier longer shorter higher lower under over above below fewer
    older younger since until till exceed exceeds exceeded exceeding greater smaller larger
    bigger cheaper dearer beyond within between
""")
# words of a question that add rows up ("over 500 beds altogether"): a query
# accounts for them with an aggregate or a GROUP BY
TOTALLING_WORDS = _word_list("""
    altogether combined cumulative cumulatively
""")
# words of a question that name no table, column, value or condition: when, how much, in
# what form, and the verbs by which a row comes to be ("orders placed", "goals scored"
# names the rows, not which of them)
QUIET_WORDS = _word_list("""
    currently current moment now still yet ever already together too also whatever
    them they been being did does done stored record records recorded value values amount
    amounts year years month months day days week weeks hour hours minute minutes date dates
    time times quarter percentage percent share proportion ratio mean whole overall including
    include includes included counting counted one ones someone anyone anything thing things
    kind kinds type types placed made created added written raised logged entered sold bought
    got came took taken happened occurred produced gave brought spent
""")
MONTH_NAMES: tuple[str, ...] = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
# a question that ranks: asks for the most, the least or the top of something ("at most"
# and "at least" bound a number instead; "top-level", "top level" is a level of a hierarchy)
RANKING_WORD = re.compile(
    r"(?<!\bat )\b(?:most|least|highest|lowest|largest|smallest|biggest|greatest|fewest"
    r"|top(?![\s-]+level)|best|worst|maximum|minimum|longest|shortest|oldest|youngest|newest|cheapest"
    r"|earliest|latest)\b",
    re.I,
)

# words that judge without saying by what: a question that ranks or picks by one of them
# has as many readings as the data has measures ("the best products": by units sold, by
# revenue, by rating), unless the question names the measure
JUDGING_WORDS = _word_list("""
    best worst better worse top bottom good bad great poor poorly well important valuable
    successful unsuccessful popular unpopular loyal strong weak healthy struggling profitable
    outstanding key favourite favorite performing performer underperforming impressive
""")
# a judging question about how something went ("how did we do", "how are the stores performing")
JUDGING_PHRASE = re.compile(
    r"\bhow\s+(?:did|do|does|are|is|was|were|have|has)\b(?:\s+\w+){1,4}?\s+"
    r"(?:do|doing|done|did|go|going|gone|perform|performing|performed|fare|faring|fared)\b",
    re.I,
)
# the word after a judging word that names its measure ("best selling", "top rated")
MEASURING_WORDS = _word_list("""
    selling sold seller sellers rated rating reviewed grossing earning earners paid paying
    scoring scored attended visited viewed watched played booked ranked
""")
# the measure words that settle a judging or grading word by themselves ("most expensive":
# by price), by the word
SETTLED_BY: dict[str, frozenset[str]] = {
    w: _word_list(measures)
    for words, measures in (
        ("expensive cheap cheapest costly pricey pricy affordable", "price cost fee rate amount charge"),
        ("old oldest young youngest", "age birth born date year founded"),
        ("long longest short shortest", "duration length minute hour day second time"),
        ("profitable", "profit margin"),
        ("popular", "popularity"),
    )
    for w in words.split()
}
# words that grade without saying where the grade starts: a query that keeps the rows past a
# cutoff the question does not give ("cheap products": under what price?) has made one up
GRADING_WORDS = _word_list("""
    cheap expensive costly pricey affordable high low big small large huge tiny many few long
    short recent recently new old late early frequent frequently regular regulars rare rarely
    heavy light busy quiet slow fast active inactive loyal young senior junior lately
""")
# numbers written as words, by their value
NUMBER_WORDS: dict[str, int] = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
# ordinal numbers written as words, by their value ("the second floor")
ORDINAL_WORDS: dict[str, int] = {
    w: i
    for i, w in enumerate(
        [
            "zeroth",
            "first",
            "second",
            "third",
            "fourth",
            "fifth",
            "sixth",
            "seventh",
            "eighth",
            "ninth",
            "tenth",
        ]
    )
}
# a question that names its measure in words: "by revenue", "based on", "in terms of"
MEASURE_NAMED = re.compile(r"\b(?:by|based on|in terms of|measured by|according to|judged by)\s+\w+", re.I)

# ---------------------------------------------------------------------------
# stored values a question names
# ---------------------------------------------------------------------------

# a stored code: two to five capital letters
_CODE = re.compile(r"[A-Z]{2,5}")


def plain_text(value: str) -> str:
    """``value`` in lower case, its runs of white space one space each."""
    return " ".join(value.lower().split())


def is_code(value: object) -> bool:
    """Whether a stored value looks like a code: two to five capital letters."""
    return isinstance(value, str) and _CODE.fullmatch(value) is not None


def abbreviates(code: str, word: str, *, strict: bool = False) -> bool:
    """Whether the stored code ``code`` (three letters or more) reads as a short form of
    the question's ``word``: the word is at least two letters longer and starts with the
    code (the code is the word's first letters), or begins with the code's first letter
    and holds the rest of it in order (the word's consonants, say).  Two-letter codes are
    read only as initials (see :func:`value_named`): as short forms they fit too many
    words.  ``strict``: letters held in order count only as the word with vowels dropped,
    the code's letters after the first all consonants."""
    c, w = code.lower(), word.lower()
    if len(c) < 3 or len(w) <= len(c) or w[0] != c[0]:
        return False
    if w.startswith(c):
        return len(w) >= len(c) + 2
    if strict and any(ch in "aeiou" for ch in c[1:]):
        return False
    rest = iter(w[1:])
    return all(ch in rest for ch in c[1:])


# the endings of a word named as a plural or a verb's form: "cancels", "cancelled",
# "approved", "shipping" (a consonant doubled before -ed and -ing)
_VERB_FORMS = r"(?:e?s|e?d|[a-z]?ed|[a-z]?ing)?"


def verb_stems(word: str) -> list[str]:
    """The stems of four letters or more that ``word`` (lower case) is a verb's form of:
    'trialing' → trial, 'shipping' → ship, 'refunded' → refund, 'approved' → approve,
    'cancelled' → cancel; none for a word with no such ending."""
    stems: list[str] = []
    for ending in ("ing", "ed"):
        if word.endswith(ending):
            base = word[: -len(ending)]
            stems.append(base)
            if len(base) >= 2 and base[-1] == base[-2]:
                stems.append(base[:-1])  # a consonant doubled: shipp-ing, cancell-ed
            if ending == "ed":
                stems.append(base + "e")  # approv-ed
    return [s for s in dict.fromkeys(stems) if len(s) >= 4]


def value_named(
    question: str, *, codes: bool = False, names: Iterable[str] = (), strict: bool = False
) -> Callable[[str], bool]:
    """Whether ``question`` names a stored value: the value, in any case and spacing (words
    joined by underscores as words), as whole words of the question (a plural ending
    allowed, and for one word of four letters or more a verb's form either way: 'cancel'
    named by "cancelled", 'trialing' by "trial").
    With ``codes``, also a code (:func:`is_code`) that a word of the question spells out
    (:func:`abbreviates`), words that ask rather than name (:data:`ASKING_WORDS`) and words
    whose root is one of ``names`` (the tables and columns of the query: a word naming a table names no code)
    left out; and a two-letter code made of the initials of two content words in a row;
    ``strict``: as :func:`abbreviates` reads it with ``strict``.  A code that is also an
    everyday word (:data:`WORD_CODES`) counts as that word only written in capitals, as
    stored, or as a plural."""
    asked = plain_text(question or "")
    taken = {r for n in names for r in roots(n)}
    found = re.findall(r"[a-z]+", asked)
    longs = [w for w in found if len(w) >= 3 and w not in ASKING_WORDS and not (roots(w) & taken)]
    initials = {
        a[0] + b[0]
        for a, b in itertools.pairwise(found)
        if len(a) >= 3 and len(b) >= 3 and not {a, b} & NOT_INITIALS
    }

    def named(value: str) -> bool:
        # a value's words joined by underscores are named as words ('strong_yes': "strong yes")
        plain = plain_text(
            value.replace("_", " ") if re.fullmatch(r"[A-Za-z]+(?:_[A-Za-z]+)+", value) else value
        )
        # a word of four letters or more may be named as a verb's form: 'cancel' as
        # "cancelled", 'refund' as "refunded", 'approve' as "approved", 'ship' as "shipping"
        one_word = len(plain) >= 4 and plain.isalpha()
        ending = _VERB_FORMS if one_word else "(?:e?s)?"
        if plain and re.search(rf"(?<!\w){re.escape(plain)}{ending}(?!\w)", asked) is not None:
            if not (plain in WORD_CODES and is_code(value)):
                return True
            # an everyday word: named as stored (capitals) or as a plural noun
            if re.search(rf"(?<!\w){re.escape(value)}(?!\w)", question or "") is not None or (
                len(plain) >= 3 and re.search(rf"(?<!\w){re.escape(plain)}e?s(?!\w)", asked) is not None
            ):
                return True
        # a stored verb's form named by its stem: 'trialing' by "trial", 'refunded' by "refund"
        if one_word and not is_code(value):
            for stem in verb_stems(plain):
                if re.search(rf"(?<!\w){re.escape(stem)}{_VERB_FORMS}(?!\w)", asked) is not None:
                    return True
        if not codes or not is_code(value):
            return False
        return (
            plain in initials if len(plain) == 2 else any(abbreviates(value, w, strict=strict) for w in longs)
        )

    return named


def nameable(names: Iterable[str]) -> Callable[[str], bool]:
    """Whether a stored value is worth looking for in a question about a query whose
    tables and columns are ``names``: three letters or more (a code, :func:`is_code`, of
    any length), with letters, and not only words of those names (a value 'x' beside a
    column ``is_x``), a verb's form of one counted as it (:func:`verb_stems`: a value
    'canceled' beside a column ``cancel_at_period_end``, which "set to cancel" names)."""
    taken = {r for n in names for r in roots(n)}

    def of_names(word: str) -> bool:
        return word in taken or any(s in taken for s in verb_stems(word))

    def worth(value: str) -> bool:
        plain = plain_text(value)
        return (
            (len(plain) >= 3 or is_code(value))
            and re.search(r"[a-z]", plain) is not None
            and not all(of_names(w) for w in roots(plain))
        )

    return worth
