"""Instruction text: a question that speaks to the assistant instead of asking the corpus (overrides its
instructions, gives it a new role, asks for its prompt, carries a chat template's tokens, names a jailbreak).

A text is scored in its `words` form (folded, punctuation removed), so a question and its skeleton score alike:
mining withholds a shape whose skeleton is instruction text, `lookup` serves no plan for such a question, and plan
validation rejects such a step query. Each cue that matches adds its weight once: a strong cue decides alone, a
weak one (words an ordinary question may use: "act as", "developer mode", "system prompt", "print") needs a second.
`THRESHOLD` and the weights were chosen on the dev half of `tests/fixtures/instruction_text.jsonl` (BENCHMARKS.md,
"Instruction text").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schemas.text import words

THRESHOLD = 1.0
STRONG, WEAK = 1.0, 0.5


@dataclass(frozen=True)
class Cue:
    family: str  # override, role, exfiltration, template, jailbreak
    weight: float
    pattern: re.Pattern[str]


def _alt(*forms: str) -> str:
    return "(?:" + "|".join(forms) + ")"


def _phrase(*forms: str) -> str:
    """Any of `forms` as whole words. Cues search " words form " and delimit words by its spaces: a pattern that
    starts with a space is searched space by space, where a leading \\b would be tried at every character."""
    return " " + _alt(*forms) + " "


# Override: an imperative to drop what came before, in English and a few languages' forms (accents folded).
_VERB = _alt(r"ignor\w*", r"disregard\w*", "forget", "forgetting", r"overrid\w*", "bypass", "discard", "abandon",
             "disable", "oublie[rz]?", "vergiss", "vergesst", "vergessen", r"missacht\w*", "olvida", "olvide",
             "dimentica", "trascura", "esqueca", "negeer", "vergeet", r"игнорир\w*", "забудь")
_PRIOR = _alt("all", "any", "every", "previous", "previously", "prior", "above", "earlier", "preceding", "initial",
              "original", "former", "your", "its", "system", "toutes", "tous", "tes", "vos", r"precedent\w*",
              r"anterieur\w*", "alle", "vorherigen", "bisherigen", "obigen", "deine", "todas", "todos",
              "anteriores", "previas", "tus", "tutte", "precedenti", "tue", "vorige", "eerdere", "jouw", "suas",
              "все", r"предыдущ\w*", "свои", "твои")
_FILLER = _alt("the", "of", "my", "these", "those", "les", "la", "le", "des", "den", "die", "der", "las", "los",
               "el", "gli", "het", "de", "as", "os")
_RULES = _alt(r"instructions?", r"prompts?", "rules", "directions", "guidelines", "directives", "commands",
              "messages", "context", "constraints", "restrictions", "guardrails", "filters", "programming",
              "training", r"content polic\w*", r"usage polic\w*", "consignes", "regles", "anweisungen", "regeln",
              "vorgaben", "instrucciones", "reglas", "istruzioni", "regole", "instructies", "regels", "instrucoes",
              "regras", r"инструкци\w*", "правила")
_BEFORE = _alt("above", "before this", "so far", "previously", "earlier")
_TOLD = _alt("the", "everything", "all", "anything", "of", "that", "what", "you", "were", "was", "have", "been",
             "told", "said", "written", "given", _RULES)
_SHOW = _alt("repeat", "print", "output", "copy", "show", "reveal", "recite", "return", "paste", "echo", "display")
_OWN = _alt("own", "full", "entire", "exact")
_HIDDEN = _alt("original", "initial", "hidden", "secret", "internal", "system", "first", "pre", "underlying",
               "developer")

CUES: tuple[Cue, ...] = tuple(Cue(family, weight, re.compile(pattern)) for family, weight, pattern in (
    # "ignore all previous instructions", "oublie tes instructions", "disable your filters"
    ("override", STRONG, f" {_VERB} (?:(?:{_FILLER}|{_PRIOR}) ){{0,3}}{_PRIOR} (?:(?:{_FILLER}|{_PRIOR}) ){{0,2}}"
                         f"{_RULES} "),
    # the qualifier after the noun: "ignora le istruzioni precedenti", "ignore as instrucoes anteriores"
    ("override", STRONG, f" {_VERB} (?:{_FILLER} ){{0,2}}{_RULES} {_PRIOR} "),
    # "disregard the above", "forget everything you were told before", "ignore the filters above"
    ("override", STRONG, f" {_VERB} (?:{_TOLD} ){{0,5}}{_BEFORE} "),
    ("override", STRONG, f" (?:do not|don t|stop|no longer) (?:follow|obey|comply with)\\w* {_PRIOR} {_RULES} "),
    ("override", STRONG, "忽略.{0,12}(?:指令|指示|规则)"),
    ("override", WEAK, f" {_VERB} (?:(?:the|all|any) )?{_RULES} "),  # "ignore the rules"
    ("override", WEAK, r" (?:ignor\w*|disregard|bypass|overrid\w*) (?:the )?(?:safety|ethical|security|content) "
                       r"(?:protocols|guidelines|filters|policy|policies|restrictions|rules|checks) "),
    ("override", WEAK, " new (?:system )?(?:instructions|prompt|directives?) "),
    # Role reassignment: "you are now", "pretend to be", "act as my", "du bist jetzt"
    ("role", WEAK, _phrase("you are now", "you re now", "from now on", "henceforth",
                           "for the rest of (?:this|the) conversation", "you (?:will|must) now",
                           "(?:tu es|vous etes) (?:maintenant|desormais)", "du bist (?:jetzt|nun)", "ab jetzt",
                           "ahora eres", "a partir de ahora", "ora sei", "d ora in poi", "je bent nu", "vanaf nu",
                           "agora voce e", "ты теперь")),
    ("role", WEAK, "现在你是|从现在开始"),
    ("role", WEAK, _phrase("pretend (?:to be|you are|you re|that you)", "act(?:ing)? as (?:if|though|a|an|my)",
                           r"role ?play\w*", "play the (?:role|part)", "imagine (?:you are|you re|that you)",
                           "(?:behave|respond|answer|reply|speak|talk) (?:only )?(?:as|like) (?:a|an|if|my|two)",
                           "simulate", "let s play a game", "agis comme", "actua como")),
    ("role", WEAK, _phrase("you (?:are|re) no longer", "stop being",
                           "your new (?:role|name|task|persona|identity|purpose)",
                           "you are (?:a|an) (?:ai|assistant|chatbot|language model|llm|bot|model|hacker|pirate)",
                           "you have (?:now )?been (?:freed|released|reprogrammed|unlocked)",
                           "i am your (?:developer|creator|admin|administrator|owner|programmer)",
                           "you have (?:full|unrestricted|root|admin) access")),
    # System-prompt exfiltration: "print your system prompt", "repeat the text above"
    ("exfiltration", STRONG, f" (?:your|its) (?:(?:{_OWN}|{_HIDDEN}) )*(?:prompt|system message)s? "),
    ("exfiltration", STRONG, f" (?:your|its) (?:{_OWN} )*{_HIDDEN} (?:instructions|message|rules|guidelines|"
                             "directives|configuration|programming) "),
    ("exfiltration", STRONG, " (?:ton|votre|ta|dein|deine|deinen|tu|tuo|je|jouw|seu|teu|твои|твой) "
                             "(?:prompt|systemprompt|instructions|anweisungen|instrucciones|istruzioni) "),
    ("exfiltration", STRONG, f" {_SHOW} (?:(?:me|the|all|of|everything|anything|text|words|content|lines|message|"
                             "messages|that|is|was|written|said) ){0,4}(?:above|before this|preceding) "),
    ("exfiltration", STRONG, " above this (?:line|message) "),
    ("exfiltration", WEAK, _phrase("system ?prompt", "prompt (?:de |di |do |du )?(?:sistema|systeme)",
                                   r"системн\w* промпт")),
    ("exfiltration", WEAK, "系统提示"),
    ("exfiltration", WEAK, " your (?:instructions|rules|guidelines|directives) "),
    ("exfiltration", WEAK, " (?:you were|were you) (?:given|told) "),
    ("exfiltration", WEAK, " your (?:developers|creators|makers|programmers) "),
    ("exfiltration", WEAK, _phrase("top of (?:this|the) conversation", "before this (?:message|conversation)")),
    ("exfiltration", WEAK, _phrase("repeat", "print", "reveal", "output", "recite", "dump", "leak", "disclose",
                                   "summari[sz]e", "translate", "spell out", "verbatim", "word for word")),
    # Chat-template tokens, in their words form ("<|im_start|>" is "im_start"), and role headers
    ("template", STRONG, _phrase("im_start", "im_end", "im_sep", "endoftext", "end_of_text", "eot_id",
                                 "start_header_id", "end_header_id", "begin_of_text", "start_of_turn",
                                 "end_of_turn")),
    ("template", STRONG, " inst (?:.* )?(?:inst|sys) | sys (?:.* )?inst "),  # [INST] ... [/INST], <<SYS>>
    ("template", STRONG, " (?:begin|start|end) (?:of )?(?:the )?(?:new )?(?:system )?(?:instructions|prompt) "),
    ("template", WEAK, "^ (?:system|assistant|user|human) "),
    ("template", WEAK, " (?:system|assistant|user) (?:comply|sure|override) "),
    # Jailbreak names
    ("jailbreak", STRONG, _phrase(r"jail ?break\w*", "do anything now", "dan mode", "(?:anti|better) ?dan",
                                  "developer mode (?:enabled|activated|output)",
                                  "evil (?:confidant|assistant|ai|bot|twin)", "stan mode", "pwned",
                                  "(?:no longer|not) (?:bound|restricted|limited) by")),
    ("jailbreak", WEAK, _phrase("(?:developer|god|dan|debug|admin|sudo|maintenance|unrestricted|unfiltered) mode",
                                "mode (?:developpeur|developer|dieu)", "entwicklermodus",
                                "modo (?:desarrollador|dios)")),
    ("jailbreak", WEAK, " (?:you are|you re|are now|be|become|called|named|as|play) (?:now )?(?:dan|stan) "),
    ("jailbreak", WEAK, _phrase("uncensored", "unfiltered", "unrestricted", "amoral", "unethical", "unaligned",
                                "(?:no|without(?: any)?) (?:rules|filters|restrictions|limits|limitations|guidelines|"
                                "ethics|morals|censorship|ethical guidelines|content policy)",
                                "escaped (?:its|your) programming", r"uneingeschrankt\w*",
                                "ohne (?:regeln|einschrankungen)", "sin (?:restricciones|reglas|filtros|limites)",
                                "sans (?:restrictions|regles|filtres)", "senza (?:regole|restrizioni|filtri)",
                                "zonder (?:regels|beperkingen)", r"без ограничени\w*")),
    ("jailbreak", WEAK, _phrase("(?:deceased|late|dead) (?:grandma|grandmother|grandpa|grandfather)",
                                "(?:linux|bash|python|sql) (?:terminal|shell|console|interpreter)", r"\w+gpt",
                                "sudo")),
))


@dataclass(frozen=True)
class Verdict:
    score: float
    families: tuple[str, ...]  # the cue families that matched, in CUES order

    @property
    def instruction(self) -> bool:
        return self.score >= THRESHOLD

    @property
    def reason(self) -> str:
        """Why no plan is served, naming the cue families (never the text)."""
        return f"instruction text ({', '.join(self.families)}): no plan is served"


def score(text: str) -> Verdict:
    """The weights of the cues a text matches, summed (each cue once), and their families."""
    form = f" {words(text)} "
    matched = [c for c in CUES if c.pattern.search(form)]
    return Verdict(sum(c.weight for c in matched), tuple(dict.fromkeys(c.family for c in matched)))


def is_instruction(text: str) -> bool:
    """Whether a question (or a skeleton, or a step query) is instruction text."""
    return score(text).instruction
