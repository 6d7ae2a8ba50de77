#!/usr/bin/env python3
"""Generate seekbench's embedded sample data (deterministic, stdlib only).

Writes, under ``--out-dir`` (default: the repository root):

* ``seekbench/data/sample_traces.jsonl``: 48 canonical traces (12 questions x 4
  agents) with one rater's labels inline;
* ``seekbench/data/sample_human.jsonl``: the same inline labels as an annotation
  set (rater ``sample-annotator``);
* ``seekbench/data/sample_second_annotator.jsonl``: a second human rater
  (``sample-annotator-2``) who disagrees on about 15% of the grounding,
  clarity and sufficiency labels, for agreement examples;
* ``seekbench/data/sample_search_r1.jsonl`` and ``sample_release.jsonl``: six of
  those traces each, written as a Search-R1 run (tagged text, no labels) and in
  the SeekBench release format (labels inline), for the Quickstart's
  conversions (``sample_formats.py``).

Everything here is invented for this project. The questions are about the
fictional province of Vessary (its towns, rivers, engineers and astronomers),
so that nobody mistakes the sample for real data or real facts. Retrieval is a
small BM25 over the 40 passages below; the agents are scripted policies with
recognisable behaviours:

* ``careful-planner``: decomposes the question, reasons only from what it
  retrieved, refines failed queries, resolves conflicting passages and answers
  only once it holds E = 2.
* ``eager-answerer``: starts from a guess, searches once (sometimes twice,
  sometimes not at all) and answers with whatever it has, usually with E < 2
  and often wrongly.
* ``looper``: issues vague queries and repeats them verbatim; some traces are
  cut off at the 20-step budget without an answer (some after already holding
  E = 2), some recover late, some give up with a guess.
* ``synthesizer``: combines facts across results well, but its plans lean on
  unsupported assumptions; it answers once it holds all the facts, even when a
  conflicting passage kept the evidence at E = 1.

Labels follow the content (see ``TraceBuilder.result``):

* clarity: ``Clear`` if the result holds a passage relevant to the question and
  no conflicting passage, else ``Unclear``;
* sufficiency: ``Sufficient`` if, with this result, the trace has seen every
  fact the answer needs and this result supplies one of them, else
  ``Insufficient``;
* search_type: ``InitialQuery`` for the first search, ``RepeatQuery`` for a
  query equal (after normalisation) to an earlier one, otherwise
  ``FollowUpQuery`` (a new information need) or ``RefinedQuery`` (the same
  need, rephrased);
* grounding: ``Grounded`` when the reasoning or query rests on the question or
  on retrieved passages, ``NotGrounded`` when it rests on a guess or misreads
  a passage.

A few labels are deliberately missing (whole steps, or one field) so that the
metrics have "unlabeled" counts to report.

Run ``python scripts/make_sample_data.py`` after editing; the output is
byte-identical across runs.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

from sample_formats import RELEASE_TRACES, SEARCH_R1_TRACES, pick, release_record, search_r1_record

SEED = 20261130
SCHEMA_VERSION = "1.0"
DATASET = "sample-qa"
STEP_BUDGET = 20
ANNOTATION_TIME = "2026-11-30T00:00:00Z"
RATER_1 = "sample-annotator"
RATER_2 = "sample-annotator-2"
DISAGREEMENT_RATE = 0.15
AGENTS = ("careful-planner", "eager-answerer", "looper", "synthesizer")
TRACES_REL = Path("seekbench") / "data" / "sample_traces.jsonl"
HUMAN_REL = Path("seekbench") / "data" / "sample_human.jsonl"
SECOND_REL = Path("seekbench") / "data" / "sample_second_annotator.jsonl"
SEARCH_R1_REL = Path("seekbench") / "data" / "sample_search_r1.jsonl"
RELEASE_REL = Path("seekbench") / "data" / "sample_release.jsonl"
REPO_ROOT = Path(__file__).resolve().parent.parent

# --------------------------------------------------------------------------------------------
# The fictional world: 40 short passages about the province of Vessary.
# --------------------------------------------------------------------------------------------

PASSAGES: list[tuple[str, str, str]] = [
    ("vsy-01", "Idris Pellam",
     "Idris Pellam (1794-1863) was a Vessarian clockmaker and inventor. He was born in Orlesk, the son of a "
     "bell founder, and learned his trade in his father's workshop."),
    ("vsy-02", "Tide clock",
     "A tide clock shows the state of the tide instead of the hour. Idris Pellam built the first working tide "
     "clock in 1821 for the harbour master of Kessarby."),
    ("vsy-03", "Idris Pellam: later life",
     "In his last years Idris Pellam lived above his shop on Quay Lane in Kessarby, where he died in the "
     "winter of 1863."),
    ("vsy-04", "Orlesk",
     "Orlesk is a small town in western Vessary, built on both banks of the River Sallow. Its bell foundry has "
     "been working for more than four hundred years."),
    ("vsy-05", "Halvane",
     "Halvane is a market town on the River Sallow, about twenty miles downstream from Orlesk. It is best known "
     "for its lock and its Thursday cheese market."),
    ("vsy-06", "River Sallow",
     "The River Sallow rises in the Corran Hills and flows east past Orlesk and Halvane before draining into "
     "Lake Venn."),
    ("vsy-07", "Halvane Lock",
     "The Halvane Lock, completed in 1848, lets barges pass the weir at Halvane. It was designed by the "
     "engineer Marta Quell."),
    ("vsy-08", "Marta Quell",
     "Marta Quell (1811-1880) was an engineer born in Tovin Ford. In 1836 she married the cartographer "
     "Osric Danvey."),
    ("vsy-09", "Vessary Institute of Mechanics",
     "The Vessary Institute of Mechanics was founded in Halvane in 1852. Its first president was Marta Quell, "
     "who held the post for nine years."),
    ("vsy-10", "Tovin Ford",
     "Tovin Ford is a village at an old crossing of the Ember River. It is known for its water mill and its "
     "spring horse fair."),
    ("vsy-11", "Ember River",
     "The Ember River runs south from the uplands through Tovin Ford and Kessarby and empties into "
     "Gullmere Bay."),
    ("vsy-12", "Osric Danvey",
     "Osric Danvey (1808-1871) was a Vessarian cartographer. His First Survey of Vessary, finished in 1839, was "
     "the first complete map of the province."),
    ("vsy-13", "Danvey Society",
     "The Danvey Society, a club for map makers and surveyors, was founded by Osric Danvey in 1841. It held its "
     "first meetings in a rented room above a chandler's shop in Kessarby."),
    ("vsy-14", "Leda Ormsby",
     "Leda Ormsby (1846-1919) was an astronomer at the Brindle Observatory. In 1877 she discovered the comet "
     "now known as Ormsby's Lantern."),
    ("vsy-15", "Brindle Observatory",
     "The Brindle Observatory stands on Brindle Hill, two miles north of the town of Quarrow. It was built in "
     "1859 with money raised by the Vessary Institute of Mechanics."),
    ("vsy-16", "Ormsby's Lantern",
     "Ormsby's Lantern is a periodic comet first seen from the Brindle Observatory in 1877. It returns roughly "
     "every 61 years."),
    ("vsy-17", "The Sallow Suite",
     "The Sallow Suite is a set of five pieces for string quartet, written by the composer Tamsin Arkwell "
     "in 1902."),
    ("vsy-18", "Tamsin Arkwell",
     "Tamsin Arkwell (1868-1941) was a Vessarian composer and string player. She played the viola in the "
     "Halvane Quartet for more than twenty years."),
    ("vsy-19", "Jonah Pellam",
     "Jonah Pellam kept the rope ferry across the Sallow at Halvane for thirty years. He died in 1870, the year "
     "the ferry was replaced by a bridge."),
    ("vsy-20", "Quarrow water clock",
     "The water clock in the Quarrow market hall was built by Bede Marrin in 1819. Visitors often mistake it "
     "for a tide clock."),
    ("vsy-21", "Orlesk bell foundry",
     "The Orlesk bell foundry cast the great bell of Kessarby in 1790. Several generations of the Pellam family "
     "worked there as founders."),
    ("vsy-22", "Corran Hills",
     "The Corran Hills are a range of low sandstone hills in western Vessary. Several streams rise on their "
     "eastern slopes."),
    ("vsy-23", "Lake Venn",
     "Lake Venn is the largest lake in Vessary. Its outflow reaches the sea through the short Venn Channel."),
    ("vsy-24", "Gullmere Bay",
     "Gullmere Bay is a sheltered bay on the southern coast of Vessary. A lighthouse has stood on its eastern "
     "point since 1811."),
    ("vsy-25", "Kessarby",
     "Kessarby is the chief port of Vessary. Its harbour was enlarged twice in the nineteenth century and is "
     "still used by the fishing fleet."),
    ("vsy-26", "Quarrow",
     "Quarrow is a hill town in northern Vessary, known for its slate quarries and its covered market hall."),
    ("vsy-27", "Brindle Hall",
     "Brindle Hall is a manor house just outside Orlesk. In the 1870s its owner kept a private telescope in "
     "the east tower and invited visiting astronomers."),
    ("vsy-28", "Halvane Quartet",
     "The Halvane Quartet was a string quartet founded in 1889. It gave the first performances of several works "
     "by local composers."),
    ("vsy-29", "The Ember Suite",
     "The Ember Suite is an orchestral work by Corin Vale, a composer and cellist from Kessarby, first played "
     "in 1911."),
    ("vsy-30", "Vessary Society of Engineers",
     "The Vessary Society of Engineers was founded in Kessarby in 1830. Its first president was the "
     "shipwright Aldous Fenn."),
    ("vsy-31", "Halvane weir",
     "The weir at Halvane was built in 1790 to drive the town's mills. Before the lock opened, cargo had to be "
     "carried around the weir by cart."),
    ("vsy-32", "Comet Tarrin",
     "Comet Tarrin was found in 1880 by the amateur observer Pell Tarrin, who watched the sky from his garden "
     "in Halvane."),
    ("vsy-33", "Institute hall, Halvane",
     "The hall of the Vessary Institute of Mechanics on Lock Street was rebuilt after a fire in 1874. The "
     "Institute's founding charter of 1852 hangs in the entrance."),
    ("vsy-34", "Osric Danvey: early life",
     "Osric Danvey was born in Quarrow and was apprenticed to a land surveyor at the age of fourteen."),
    ("vsy-35", "Danvey Society today",
     "Today the Danvey Society keeps its library and map collection in Quarrow, in the house where Osric "
     "Danvey was born."),
    ("vsy-36", "Kessarby tide tables",
     "The harbour of Kessarby printed tide tables every year from 1805. Sailors kept buying them long after "
     "the tide clock was installed."),
    ("vsy-37", "Brook Tarrow",
     "Some older maps draw the mill stream at Tovin Ford as a branch of the Brook Tarrow, a small stream that "
     "runs north into Lake Venn."),
    ("vsy-38", "Marta Quell: works",
     "Besides her lock, Marta Quell designed the swing bridge in Kessarby harbour (1857) and the pumping "
     "engines of the Orlesk foundry."),
    ("vsy-39", "Pellam Prize",
     "The Pellam Prize, named after the clockmaker Idris Pellam, is awarded every two years by the Vessary "
     "Institute of Mechanics for a useful invention."),
    ("vsy-40", "Arkwell family",
     "The Arkwell family ran a music shop in Orlesk. Tamsin Arkwell's brother Edwin became a well-known "
     "organ builder."),
]


@dataclass(frozen=True)
class Question:
    """One question with everything the scripted agents need to talk about it.

    ``groups``: the facts the answer needs, in the order a careful agent finds them; each group is
    the passages that state that fact. ``conflicts``: passages that point to a wrong answer.
    ``facts`` / ``conflict_facts``: what each relevant passage says, in the agents' words.
    ``hops[g]``: queries that target group g (first try, rephrasing). ``targets[g]``: what group g is.
    ``answers``: surface forms of a correct answer, each with whether it matches gold after SQuAD
    normalisation (all are judged correct by the human rater). ``leap``: an unsupported inference
    and the wrong answer it leads to, for the synthesizer's overreaching traces.
    """

    qid: str
    question: str
    gold: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    conflicts: tuple[str, ...]
    facts: dict
    conflict_facts: dict
    targets: tuple[str, ...]
    hops: tuple[tuple[str, ...], ...]
    broad: str
    vague: str
    check: str
    plan: str
    conclusion: str
    conflict_note: str
    answers: tuple[str, ...]
    guess: str
    guess_reason: str
    wrong_from_conflict: str
    misread: str
    assumption: str
    assumption2: str
    leap: tuple[str, str] | None = None


QUESTIONS: list[Question] = [
    Question(
        qid="q01",
        question="Which river flows through the town where Idris Pellam was born?",
        gold=("River Sallow",),
        groups=(("vsy-01",), ("vsy-04", "vsy-06")),
        conflicts=(),
        facts={"vsy-01": "Idris Pellam was born in Orlesk",
               "vsy-04": "Orlesk is built on both banks of the River Sallow",
               "vsy-06": "the River Sallow flows past Orlesk"},
        conflict_facts={},
        targets=("where Idris Pellam was born", "which river runs through Orlesk"),
        hops=(("Idris Pellam birthplace", "Idris Pellam born town"), ("Orlesk river", "river Orlesk town")),
        broad="river town Idris Pellam born",
        vague="Pellam family foundry",
        check="Orlesk River Sallow",
        plan="Two parts: find the town where Idris Pellam was born, then the river that runs through that "
             "town. I will look up his birthplace first.",
        conclusion="Pellam was born in Orlesk, and Orlesk lies on the River Sallow, so the river is the Sallow.",
        conflict_note="",
        answers=("River Sallow", "the River Sallow", "Sallow River"),
        guess="Ember River",
        guess_reason="Pellam worked in the port of Kessarby, so he probably grew up by the Ember River",
        wrong_from_conflict="",
        misread="",
        assumption="Clockmakers usually came from the big port towns, so Pellam was most likely born in Kessarby.",
        assumption2="Orlesk is probably on the same river as the other western towns.",
        leap=("Orlesk is probably one of the old foundry towns on the Ember River, like Kessarby, so the river "
              "must be the Ember River.", "Ember River"),
    ),
    Question(
        qid="q02",
        question="In what year did the inventor of the tide clock die?",
        gold=("1863",),
        groups=(("vsy-02",), ("vsy-01", "vsy-03")),
        conflicts=("vsy-19",),
        facts={"vsy-02": "the first tide clock was built by Idris Pellam",
               "vsy-01": "Idris Pellam lived from 1794 to 1863",
               "vsy-03": "Idris Pellam died in Kessarby in the winter of 1863"},
        conflict_facts={"vsy-19": "a Jonah Pellam died in 1870"},
        targets=("who invented the tide clock", "when Idris Pellam died"),
        hops=(("tide clock inventor", "first tide clock built by"), ("Idris Pellam died", "Idris Pellam death year")),
        broad="tide clock inventor death year",
        vague="clock maker",
        check="Idris Pellam clockmaker died 1863",
        plan="First identify who invented the tide clock, then find the year that person died.",
        conclusion="The tide clock was built by Idris Pellam, and Pellam died in 1863.",
        conflict_note="One passage says a Pellam died in 1870, but that is Jonah Pellam, a ferryman at Halvane, "
                      "not the clockmaker. I will confirm the clockmaker's own dates.",
        answers=("1863", "in 1863", "1863."),
        guess="1858",
        guess_reason="most inventors of that period seem to have died in the 1850s",
        wrong_from_conflict="1870",
        misread="The result mentions Pellam dying in 1870, so the inventor of the tide clock died in 1870.",
        assumption="The tide clock was probably invented at the Vessary Institute of Mechanics, so its inventor "
                   "should be listed there.",
        assumption2="His death year will be on the same page as his invention, since he is only known for it.",
        leap=("Pellam built the tide clock in 1821, and inventors of his generation rarely lived much past "
              "sixty, so he most likely died around 1850.", "1850"),
    ),
    Question(
        qid="q03",
        question="Who was the first president of the Vessary Institute of Mechanics?",
        gold=("Marta Quell",),
        groups=(("vsy-09",),),
        conflicts=("vsy-30",),
        facts={"vsy-09": "the first president of the Vessary Institute of Mechanics was Marta Quell"},
        conflict_facts={"vsy-30": "the first president of the Vessary Society of Engineers was Aldous Fenn"},
        targets=("the Institute's first president",),
        hops=(("Vessary Institute of Mechanics first president", "Institute of Mechanics founded president"),),
        broad="first president Vessary engineers institute",
        vague="Vessary engineers society",
        check="Institute of Mechanics Halvane Marta Quell president",
        plan="This is a single lookup: the founding history of the Vessary Institute of Mechanics should name "
             "its first president.",
        conclusion="The Institute's own history says its first president was Marta Quell.",
        conflict_note="There are two similar bodies here: the Vessary Society of Engineers (president Aldous "
                      "Fenn) is not the Institute of Mechanics. I will check the Institute itself.",
        answers=("Marta Quell", "Marta Quell.", "Quell"),
        guess="Idris Pellam",
        guess_reason="the Institute gives a prize named after Idris Pellam, so he was probably its founder",
        wrong_from_conflict="Aldous Fenn",
        misread="The result names Aldous Fenn as first president, so he led the Institute.",
        assumption="The Institute was surely founded by engineers of the Kessarby harbour works.",
        assumption2="A founding president is usually listed on the first page of such a history.",
    ),
    Question(
        qid="q04",
        question="Into which body of water does the river that passes Tovin Ford flow?",
        gold=("Gullmere Bay",),
        groups=(("vsy-10", "vsy-11"), ("vsy-11",)),
        conflicts=("vsy-37",),
        facts={"vsy-10": "Tovin Ford lies on the Ember River",
               "vsy-11": "the Ember River runs through Tovin Ford and empties into Gullmere Bay"},
        conflict_facts={"vsy-37": "old maps show the Tovin Ford mill stream running into Lake Venn"},
        targets=("which river passes Tovin Ford", "where the Ember River ends"),
        hops=(("Tovin Ford river", "Tovin Ford crossing river"), ("Ember River mouth", "Ember River empties into")),
        broad="river Tovin Ford flows into",
        vague="mill stream maps",
        check="Ember River Gullmere Bay",
        plan="Find the river at Tovin Ford first, then follow it to where it ends.",
        conclusion="Tovin Ford is on the Ember River, and the Ember River empties into Gullmere Bay.",
        conflict_note="One passage says old maps send the Tovin Ford mill stream into Lake Venn, but that is a "
                      "mill stream on old maps, not the river itself. I will check the Ember River directly.",
        answers=("Gullmere Bay", "Gullmere Bay.", "Gullmere"),
        guess="Lake Venn",
        guess_reason="most rivers in Vessary seem to end in Lake Venn",
        wrong_from_conflict="Lake Venn",
        misread="The result says the water at Tovin Ford runs into Lake Venn, so the answer is Lake Venn.",
        assumption="Tovin Ford is probably on the River Sallow like the other river towns.",
        assumption2="Rivers in the south of the province should all reach the coast at the same bay.",
    ),
    Question(
        qid="q05",
        question="Who was the spouse of the engineer who designed the Halvane Lock?",
        gold=("Osric Danvey",),
        groups=(("vsy-07",), ("vsy-08",)),
        conflicts=(),
        facts={"vsy-07": "the Halvane Lock was designed by the engineer Marta Quell",
               "vsy-08": "Marta Quell married the cartographer Osric Danvey in 1836"},
        conflict_facts={},
        targets=("who designed the Halvane Lock", "whom Marta Quell married"),
        hops=(("Halvane Lock designed by", "Halvane Lock engineer"), ("Marta Quell married", "Marta Quell husband")),
        broad="Halvane Lock engineer spouse",
        vague="Halvane weir cart",
        check="Marta Quell Osric Danvey married",
        plan="First find the engineer of the Halvane Lock, then look up that engineer's spouse.",
        conclusion="The Halvane Lock was designed by Marta Quell, who married Osric Danvey in 1836.",
        conflict_note="",
        answers=("Osric Danvey", "Osric Danvey, the cartographer", "Danvey"),
        guess="Marta Quell",
        guess_reason="I remember the name Marta Quell from the Halvane Lock",
        wrong_from_conflict="",
        misread="",
        assumption="The lock engineer was probably one of the founders of the Vessary Society of Engineers.",
        assumption2="The engineer's spouse was probably also an engineer, so the engineers' society will list them.",
        leap=("Marta Quell designed the lock, and engineers in Vessary often married within the profession, so "
              "her husband was probably Aldous Fenn of the Society of Engineers.", "Aldous Fenn"),
    ),
    Question(
        qid="q06",
        question="In which town did the Danvey Society hold its first meetings?",
        gold=("Kessarby",),
        groups=(("vsy-13",),),
        conflicts=("vsy-35",),
        facts={"vsy-13": "the Danvey Society held its first meetings in a rented room in Kessarby"},
        conflict_facts={"vsy-35": "the Danvey Society today meets in Quarrow"},
        targets=("where the Danvey Society first met",),
        hops=(("Danvey Society first meetings", "Danvey Society founded 1841"),),
        broad="Danvey Society town",
        vague="Danvey library Quarrow",
        check="first meetings rented room chandler shop Kessarby",
        plan="Look for the founding of the Danvey Society; its history should say where it first met.",
        conclusion="The Society's founding history says its first meetings were held in Kessarby.",
        conflict_note="One passage puts the Society in Quarrow, but that is where it meets today. The question "
                      "asks about its first meetings, so I will check the founding history.",
        answers=("Kessarby", "Kessarby.", "in Kessarby"),
        guess="Kessarby",
        guess_reason="societies were usually founded in the main port, and Kessarby is the chief port",
        wrong_from_conflict="Quarrow",
        misread="The result says the Danvey Society meets in Quarrow, so its first meetings were in Quarrow.",
        assumption="Osric Danvey probably founded the Society in his home town.",
        assumption2="The founding town is probably also where the Society's archive is.",
    ),
    Question(
        qid="q07",
        question="What is the name of the comet discovered by Leda Ormsby?",
        gold=("Ormsby's Lantern",),
        groups=(("vsy-14", "vsy-16"),),
        conflicts=(),
        facts={"vsy-14": "Leda Ormsby discovered the comet known as Ormsby's Lantern in 1877",
               "vsy-16": "Ormsby's Lantern was first seen from the Brindle Observatory in 1877"},
        conflict_facts={},
        targets=("the comet Leda Ormsby discovered",),
        hops=(("Leda Ormsby comet", "Leda Ormsby discovered"),),
        broad="comet discovered Leda Ormsby name",
        vague="observer garden Halvane",
        check="Leda Ormsby Ormsby's Lantern",
        plan="A single lookup: a page on Leda Ormsby should name the comet she found.",
        conclusion="Leda Ormsby discovered the comet now called Ormsby's Lantern.",
        conflict_note="",
        answers=("Ormsby's Lantern", "Ormsbys Lantern", "the Lantern comet"),
        guess="Comet Ormsby",
        guess_reason="comets are normally named after their discoverer",
        wrong_from_conflict="",
        misread="",
        assumption="Comets in Vessary were named after the observatory, so it is probably the Brindle Comet.",
        assumption2="The comet's page will give its name in the first line.",
    ),
    Question(
        qid="q08",
        question="Near which town is the observatory where Ormsby's Lantern was first seen?",
        gold=("Quarrow",),
        groups=(("vsy-16", "vsy-14"), ("vsy-15",)),
        conflicts=("vsy-27",),
        facts={"vsy-16": "Ormsby's Lantern was first seen from the Brindle Observatory",
               "vsy-14": "Leda Ormsby worked at the Brindle Observatory",
               "vsy-15": "the Brindle Observatory stands two miles north of Quarrow"},
        conflict_facts={"vsy-27": "Brindle Hall near Orlesk had a telescope in the 1870s"},
        targets=("which observatory Ormsby's Lantern was seen from", "where the Brindle Observatory is"),
        hops=(("Ormsby's Lantern observatory", "Ormsby's Lantern first seen"),
              ("Brindle Observatory location", "Brindle Observatory Brindle Hill town")),
        broad="observatory Ormsby's Lantern town",
        vague="Brindle Hall telescope",
        check="Brindle Observatory Quarrow",
        plan="Find the observatory that first saw Ormsby's Lantern, then find which town it is near.",
        conclusion="Ormsby's Lantern was first seen from the Brindle Observatory, which stands two miles north "
                   "of Quarrow.",
        conflict_note="Brindle Hall near Orlesk also had a telescope, but it is a manor house, not the Brindle "
                      "Observatory. I will look up the observatory itself.",
        answers=("Quarrow", "Quarrow.", "near Quarrow"),
        guess="Halvane",
        guess_reason="the Institute that paid for observatories was based in Halvane",
        wrong_from_conflict="Orlesk",
        misread="The result mentions Brindle and a telescope near Orlesk, so the observatory is near Orlesk.",
        assumption="The observatory is probably in Halvane, where the astronomers' Institute was.",
        assumption2="An observatory named Brindle must be close to Brindle Hall.",
    ),
    Question(
        qid="q09",
        question="In which year was the Vessary Institute of Mechanics founded?",
        gold=("1852",),
        groups=(("vsy-09", "vsy-33"),),
        conflicts=("vsy-30",),
        facts={"vsy-09": "the Vessary Institute of Mechanics was founded in Halvane in 1852",
               "vsy-33": "the Institute's founding charter is dated 1852"},
        conflict_facts={"vsy-30": "the Vessary Society of Engineers was founded in 1830"},
        targets=("the Institute's founding year",),
        hops=(("Vessary Institute of Mechanics founded", "Institute of Mechanics founding charter"),),
        broad="Vessary engineers institute founded year",
        vague="engineers founded",
        check="Vessary Institute of Mechanics founding charter 1852",
        plan="A single lookup: the history of the Vessary Institute of Mechanics should give its founding year.",
        conclusion="The Institute was founded in Halvane in 1852.",
        conflict_note="The 1830 date belongs to the Vessary Society of Engineers, a different body. I will "
                      "check the Institute of Mechanics itself.",
        answers=("1852", "in 1852", "1852 AD"),
        guess="1848",
        guess_reason="it was probably set up when the Halvane Lock opened",
        wrong_from_conflict="1830",
        misread="The result says the Vessary engineers' body was founded in 1830, so the answer is 1830.",
        assumption="The Institute was presumably founded together with the engineers' society in Kessarby.",
        assumption2="The founding year should be on the Institute's building, which is in Kessarby.",
    ),
    Question(
        qid="q10",
        question="Which lake does the river that flows through Halvane drain into?",
        gold=("Lake Venn",),
        groups=(("vsy-05", "vsy-06"), ("vsy-06",)),
        conflicts=(),
        facts={"vsy-05": "Halvane is a market town on the River Sallow",
               "vsy-06": "the River Sallow flows past Halvane and drains into Lake Venn"},
        conflict_facts={},
        targets=("which river flows through Halvane", "where the River Sallow drains"),
        hops=(("Halvane river", "Halvane market town river"), ("River Sallow drains into", "River Sallow lake")),
        broad="lake river Halvane drain",
        vague="Halvane ferry bridge",
        check="River Sallow Lake Venn",
        plan="First find the river through Halvane, then find the lake it drains into.",
        conclusion="Halvane is on the River Sallow, and the Sallow drains into Lake Venn.",
        conflict_note="",
        answers=("Lake Venn", "Lake Venn.", "Venn"),
        guess="Gullmere Bay",
        guess_reason="the big rivers of Vessary end at the coast",
        wrong_from_conflict="",
        misread="",
        assumption="Halvane is probably on the Ember River, which is the largest river.",
        assumption2="The lake is probably the one nearest to the Corran Hills.",
    ),
    Question(
        qid="q11",
        question="Which instrument did the composer of The Sallow Suite play?",
        gold=("viola", "the viola"),
        groups=(("vsy-17",), ("vsy-18",)),
        conflicts=("vsy-29",),
        facts={"vsy-17": "The Sallow Suite was written by the composer Tamsin Arkwell",
               "vsy-18": "Tamsin Arkwell played the viola in the Halvane Quartet"},
        conflict_facts={"vsy-29": "the composer of The Ember Suite, Corin Vale, was a cellist"},
        targets=("who composed The Sallow Suite", "which instrument Tamsin Arkwell played"),
        hops=(("Sallow Suite composer", "The Sallow Suite written by"),
              ("Tamsin Arkwell instrument", "Tamsin Arkwell played")),
        broad="composer suite instrument played",
        vague="orchestral suite",
        check="Tamsin Arkwell viola Halvane Quartet",
        plan="Find the composer of The Sallow Suite first, then the instrument that composer played.",
        conclusion="The Sallow Suite is by Tamsin Arkwell, who played the viola in the Halvane Quartet.",
        conflict_note="The Sallow Suite was written by Tamsin Arkwell; the cellist in these results is Corin "
                      "Vale, who wrote The Ember Suite instead. Next I need to find out which instrument Tamsin "
                      "Arkwell played.",
        answers=("viola", "the viola", "Viola (she was a violist)"),
        guess="violin",
        guess_reason="a piece for string quartet was most likely written by a violinist",
        wrong_from_conflict="cello",
        misread="The result says the composer of the suite was a cellist, so the instrument is the cello.",
        assumption="The Sallow Suite is probably an orchestral piece by a composer from Orlesk.",
        assumption2="Composers of string music usually played the violin, so that is what to confirm.",
    ),
    Question(
        qid="q12",
        question="How many years after the first tide clock was built was the Halvane Lock completed?",
        gold=("27", "27 years"),
        groups=(("vsy-02",), ("vsy-07",)),
        conflicts=("vsy-20",),
        facts={"vsy-02": "the first working tide clock was built in 1821",
               "vsy-07": "the Halvane Lock was completed in 1848"},
        conflict_facts={"vsy-20": "the Quarrow water clock, often mistaken for a tide clock, dates from 1819"},
        targets=("when the first tide clock was built", "when the Halvane Lock was completed"),
        hops=(("first tide clock built year", "tide clock first working"),
              ("Halvane Lock completed", "Halvane Lock completed year")),
        broad="tide clock Halvane Lock years",
        vague="market hall clock",
        check="tide clock 1821 Halvane Lock completed 1848",
        plan="I need two dates: when the first tide clock was built and when the Halvane Lock was completed; "
             "then I subtract.",
        conclusion="The first tide clock dates from 1821 and the Halvane Lock from 1848; 1848 - 1821 = 27 years.",
        conflict_note="The tide clock passage gives 1821; the 1819 date belongs to the Quarrow water clock, "
                      "which is not a tide clock. Next I need to find out when the Halvane Lock was completed.",
        answers=("27", "27 years", "twenty-seven years"),
        guess="30",
        guess_reason="both are early nineteenth-century works, roughly a generation apart",
        wrong_from_conflict="29",
        misread="The clock in the result dates from 1819, and I think the lock opened in 1848, so the gap is "
                "29 years.",
        assumption="Both were probably built by the same engineer, so the dates should be close together.",
        assumption2="The lock was probably built soon after the clock, within about ten years.",
        leap=("The tide clock dates from 1821, and large works like the lock usually followed within a decade, so "
              "the gap is about 10 years.", "10"),
    ),
]

# --------------------------------------------------------------------------------------------
# Retrieval: a tiny deterministic BM25 over the passages.
# --------------------------------------------------------------------------------------------

_STOP = frozenset("a an the of in on at to by for from and or is was were be which what who whom when where how "
                  "did does do many years after its it that this with as into near".split())
_PUNCT = str.maketrans("", "", string.punctuation)


def _tokens(text: str) -> list[str]:
    out = []
    for tok in text.lower().replace("'s", "").translate(_PUNCT).split():
        if tok in _STOP:
            continue
        if len(tok) > 4 and tok.endswith("s") and not tok.endswith("ss"):
            tok = tok[:-1]
        out.append(tok)
    return out


class Retriever:
    """BM25 (k1 = 1.2, b = 0.75) over title + text; ties broken by passage id."""

    def __init__(self, passages: list[tuple[str, str, str]], k: int = 3):
        self.passages = passages
        self.k = k
        self.docs = [_tokens(f"{title} {text}") for _, title, text in passages]
        self.avgdl = sum(len(d) for d in self.docs) / len(self.docs)
        df: dict[str, int] = {}
        for d in self.docs:
            for t in sorted(set(d)):
                df[t] = df.get(t, 0) + 1
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def search(self, query: str) -> list[dict]:
        q = _tokens(query)
        scored = []
        for (pid, title, text), d in zip(self.passages, self.docs):
            s = 0.0
            for t in q:
                f = d.count(t)
                if f:
                    s += self.idf[t] * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(d) / self.avgdl))
            scored.append((-round(s, 3), pid, title, text))
        scored.sort()
        return [{"id": pid, "title": title, "text": text, "rank": r, "score": -neg}
                for r, (neg, pid, title, text) in enumerate(scored[: self.k], start=1)]


# --------------------------------------------------------------------------------------------
# Building one trace.
# --------------------------------------------------------------------------------------------


class CutOff(Exception):
    """The trace reached the step budget."""


def _norm_query(q: str) -> str:
    q = q.lower().translate(_PUNCT)
    q = re.sub(r"\b(a|an|the)\b", " ", q)
    return " ".join(q.split())


@dataclass
class Observation:
    docs: list[dict]
    relevant: list[str]
    conflicts: list[str]
    new_facts: list[str]
    e: int


@dataclass
class TraceBuilder:
    q: Question
    retriever: Retriever
    steps: list[dict] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    e_max: int = 0
    final_answer: str | None = None
    correct: bool | None = None

    def _add(self, step: dict) -> dict:
        if len(self.steps) >= STEP_BUDGET:
            raise CutOff
        idx = len(self.steps)
        step = {"index": idx, **step, "depends_on": [idx - 1] if idx else []}
        self.steps.append(step)
        return step

    def reason(self, text: str, rtype: str, grounded: bool) -> None:
        self._add({"kind": "reasoning", "text": text,
                   "labels": {"reasoning_type": rtype, "grounding": "Grounded" if grounded else "NotGrounded"}})

    def search(self, query: str, intent: str, grounded: bool = True) -> Observation:
        """A search step and its result step.

        ``intent`` (FollowUpQuery or RefinedQuery) applies unless this is the first search
        (InitialQuery) or repeats an earlier query (RepeatQuery, never grounded: nothing in
        the evidence motivates running a query again).
        """
        norm = _norm_query(query)
        if not self.queries:
            stype = "InitialQuery"
        elif norm in self.queries:
            stype, grounded = "RepeatQuery", False
        else:
            stype = intent
        self._add({"kind": "search", "tool": "search", "query": query,
                   "labels": {"search_type": stype, "grounding": "Grounded" if grounded else "NotGrounded"}})
        self.queries.append(norm)
        return self.result(query)

    def result(self, query: str) -> Observation:
        docs = self.retriever.search(query)
        ids = [d["id"] for d in docs]
        relevant = [i for i in ids if i in self.q.facts]
        conflicts = [i for i in ids if i in self.q.conflicts]
        new_facts = [i for i in relevant if i not in self.seen]
        seen_after = self.seen + [i for i in ids if i not in self.seen]
        covered = all(any(p in seen_after for p in g) for g in self.q.groups)
        supplies = any(p in ids for g in self.q.groups for p in g)
        clear = bool(relevant) and not conflicts
        sufficient = covered and supplies
        self._add({"kind": "search_result", "documents": docs,
                   "labels": {"clarity": "Clear" if clear else "Unclear",
                              "sufficiency": "Sufficient" if sufficient else "Insufficient"}})
        self.seen = seen_after
        e = int(clear) + int(sufficient)
        self.e_max = max(self.e_max, e)
        return Observation(docs, relevant, conflicts, new_facts, e)

    def answer(self, text: str, correct: bool) -> None:
        self._add({"kind": "answer", "text": text})
        self.final_answer = text
        self.correct = correct

    # what the trace has established
    def covered(self, g: int) -> bool:
        return any(p in self.seen for p in self.q.groups[g])

    def first_missing(self) -> int | None:
        for g in range(len(self.q.groups)):
            if not self.covered(g):
                return g
        return None

    def all_covered(self) -> bool:
        return self.first_missing() is None


def _cite(obs: Observation, q: Question, only: list[str] | None = None) -> str:
    """A sentence citing what this result says (relevant passages, else conflicting ones)."""
    parts = []
    for d in obs.docs:
        if d["id"] in q.facts and (only is None or d["id"] in only):
            parts.append(f"the passage on {d['title']} says {q.facts[d['id']]}")
    if not parts:
        for d in obs.docs:
            if d["id"] in q.conflict_facts:
                parts.append(f"the passage on {d['title']} says {q.conflict_facts[d['id']]}")
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "." if text else ""


def _titles(obs: Observation) -> str:
    return ", ".join(d["title"] for d in obs.docs)


# --------------------------------------------------------------------------------------------
# The four agents.
# --------------------------------------------------------------------------------------------


def careful_planner(tb: TraceBuilder, rng: random.Random, meta: dict) -> None:
    """Plan, search hop by hop, refine failed queries, resolve conflicts, answer only at E = 2."""
    q = tb.q
    meta["mode"] = "plan-refine-verify"
    tb.reason(q.plan, "PlanFormation", True)
    attempts: dict[int, int] = {}
    while True:
        g = tb.first_missing()
        if g is None:  # every fact seen, but a conflicting passage kept the evidence unclear
            query, intent = q.check, "RefinedQuery"
        else:
            k = attempts.get(g, 0)
            attempts[g] = k + 1
            query = q.hops[g][min(k, len(q.hops[g]) - 1)]
            intent = "FollowUpQuery" if k == 0 else "RefinedQuery"
        obs = tb.search(query, intent)
        if tb.e_max == 2:
            break
        if obs.conflicts and obs.relevant:
            tb.reason(q.conflict_note, "StateAssessment", True)
        elif obs.new_facts:
            nxt = tb.first_missing()
            tail = f" Next I need to find out {q.targets[nxt]}." if nxt is not None else ""
            tb.reason(_cite(obs, q, obs.new_facts) + tail, "InformationSynthesis", True)
        else:
            tb.reason(f"The results ({_titles(obs)}) do not say {q.targets[g]}. I will rephrase the query.",
                      "StateAssessment", True)
    cited = _cite(obs, q, obs.new_facts) + " " if obs.new_facts else ""
    tb.reason(cited + q.conclusion, "InformationSynthesis", True)
    tb.answer(q.answers[rng.choice((0, 0, 1, 2))], True)


def eager_answerer(tb: TraceBuilder, rng: random.Random, meta: dict, no_search: bool) -> None:
    """Start from a guess, search once (rarely twice, sometimes never), answer with what it has."""
    q = tb.q
    if no_search:
        meta["mode"] = "no-search"
        tb.reason(f"I think I know this one: {q.guess_reason}.", "PlanFormation", False)
        tb.reason("Searching would take several steps, and the question looks simple.", "StateAssessment", False)
        tb.reason(f"So the answer should be {q.guess}.", "InformationSynthesis", False)
        tb.reason("I am confident enough to answer without checking.", "StateAssessment", False)
        tb.answer(q.guess, _is_correct(q, q.guess))
        return
    meta["mode"] = "answer-early"
    tb.reason(f"My first guess is {q.guess}, since {q.guess_reason}. One quick search to confirm.",
              "PlanFormation", False)
    obs = tb.search(q.broad, "FollowUpQuery")
    if tb.e_max < 2 and obs.relevant and not obs.conflicts and tb.first_missing() is not None \
            and rng.random() < 0.5:
        g = tb.first_missing()
        tb.reason(_cite(obs, q) + f" Let me quickly check {q.targets[g]}.", "InformationSynthesis", True)
        obs = tb.search(q.hops[g][0], "FollowUpQuery")
    if tb.e_max == 2:
        tb.reason(q.conclusion, "InformationSynthesis", True)
        tb.answer(q.answers[0], True)
    elif obs.conflicts and q.misread:
        tb.reason(q.misread, "InformationSynthesis", False)
        tb.answer(q.wrong_from_conflict, False)
    elif obs.relevant:
        tb.reason(_cite(obs, q) + f" That fits my guess, so the answer is {q.guess}.", "InformationSynthesis",
                  False)
        tb.answer(q.guess, _is_correct(q, q.guess))
    else:
        tb.reason(f"The results ({_titles(obs)}) do not contradict my guess, so I will go with {q.guess}.",
                  "StateAssessment", False)
        tb.answer(q.guess, _is_correct(q, q.guess))


def _loop_assess(tb: TraceBuilder, obs: Observation, honest: bool) -> None:
    q = tb.q
    if obs.relevant:
        tb.reason(_cite(obs, q) + " I am not sure this is what the question asks; I will run the search again.",
                  "StateAssessment", False)
    elif honest:
        tb.reason(f"Nothing in these results ({_titles(obs)}) says {q.targets[0]}.", "StateAssessment", True)
    else:
        tb.reason("Nothing useful yet, but the same search may work if I try it again.", "StateAssessment", False)


def looper(tb: TraceBuilder, rng: random.Random, meta: dict, mode: str) -> None:
    """Vague queries repeated verbatim; cut off, late recovery, or a guess after giving up."""
    q = tb.q
    meta["mode"] = mode
    tb.reason(f"I need to find out {q.targets[0]}. I will search for it.", "PlanFormation", True)
    if mode == "cutoff-no-evidence":
        # vague queries, repeated verbatim, until the step budget runs out
        queries = [q.vague, q.vague, q.vague + " history", q.vague + " history", q.vague]
        i = 0
        while True:
            obs = tb.search(queries[i % len(queries)], "RefinedQuery")
            _loop_assess(tb, obs, honest=i % 2 == 0)
            i += 1
    if mode == "cutoff-after-evidence":
        # finds everything, then keeps re-running the same query to "double-check"
        while not tb.all_covered():
            g = tb.first_missing()
            obs = tb.search(q.hops[g][0], "FollowUpQuery")
            if obs.new_facts:
                tb.reason(_cite(obs, q, obs.new_facts), "InformationSynthesis", True)
            else:
                tb.reason(f"Nothing in these results ({_titles(obs)}) says {q.targets[g]}.", "StateAssessment",
                          True)
        last = q.check if tb.e_max < 2 else q.hops[-1][-1]
        while True:
            tb.search(last, "RefinedQuery")
            tb.reason("That looks right, but I want to be completely sure before answering. Searching again.",
                      "StateAssessment", False)
    # late recovery or giving up: loop on a vague query first
    n_loops = rng.choice((2, 3))
    for i in range(n_loops):
        obs = tb.search(q.vague, "RefinedQuery")
        _loop_assess(tb, obs, honest=i == 0)
    if mode == "give-up":
        tb.reason(f"I cannot find it. I will go with {q.guess}, since {q.guess_reason}.", "InformationSynthesis",
                  False)
        tb.answer(q.guess, _is_correct(q, q.guess))
        return
    # late recovery: switch to targeted queries
    g = tb.first_missing()
    goal = q.targets[g] if g is not None else "a passage that settles the answer"
    tb.reason(f"Searching the same words is not working. I should search for {goal} directly.",
              "PlanFormation", True)
    attempts: dict[int, int] = {}
    while tb.e_max < 2:
        g = tb.first_missing()
        if g is None:
            query, intent = q.check, "RefinedQuery"
        else:
            k = attempts.get(g, 0)
            attempts[g] = k + 1
            query = q.hops[g][min(k, len(q.hops[g]) - 1)]
            intent = "FollowUpQuery" if g > 0 and k == 0 else "RefinedQuery"
        obs = tb.search(query, intent)
        if tb.e_max == 2:
            break
        if obs.new_facts:
            tb.reason(_cite(obs, q, obs.new_facts), "InformationSynthesis", True)
        else:
            tb.reason(f"Still nothing in {_titles(obs)}.", "StateAssessment", True)
    tb.reason(q.conclusion, "InformationSynthesis", True)
    tb.answer(q.answers[0], True)


def synthesizer(tb: TraceBuilder, rng: random.Random, meta: dict, overreach: bool) -> None:
    """Assumption-led plans, good synthesis; answers once all facts are in, even at E = 1."""
    q = tb.q
    meta["mode"] = "overreach" if overreach else "synthesize"
    tb.reason(q.assumption + " I will start with a broad search.", "PlanFormation", False)
    obs = tb.search(q.broad, "FollowUpQuery")
    attempts: dict[int, int] = {}
    while not tb.all_covered():
        if obs.relevant:
            tb.reason(_cite(obs, q) + " That corrects my starting assumption.", "InformationSynthesis", True)
        else:
            tb.reason(f"The results ({_titles(obs)}) do not cover {q.targets[tb.first_missing()]}.",
                      "StateAssessment", True)
        if overreach:
            text, wrong = q.leap
            tb.reason(text, "InformationSynthesis", False)
            tb.answer(wrong, _is_correct(q, wrong))
            return
        if rng.random() < 0.6:
            tb.reason(q.assumption2 + " I will search with that in mind.", "PlanFormation", False)
        g = tb.first_missing()
        k = attempts.get(g, 0)
        attempts[g] = k + 1
        query = q.hops[g][min(k, len(q.hops[g]) - 1)]
        obs = tb.search(query, "RefinedQuery" if k else "FollowUpQuery")
    if any(p in tb.seen for p in q.conflicts) and q.conflict_note:
        tb.reason(q.conflict_note.split(". ")[0] + ". " + q.conclusion, "InformationSynthesis", True)
    else:
        tb.reason(q.conclusion, "InformationSynthesis", True)
    tb.answer(q.answers[rng.choice((0, 1, 2))], True)


def _is_correct(q: Question, text: str) -> bool:
    n = _norm_query(text)
    return any(n == _norm_query(g) for g in q.gold)


# --------------------------------------------------------------------------------------------
# Corpus assembly.
# --------------------------------------------------------------------------------------------


def build_traces(rng: random.Random) -> list[dict]:
    """The 48 traces, sorted by trace id, with every label in place."""
    retriever = Retriever(PASSAGES)
    qids = [q.qid for q in QUESTIONS]
    # which questions get which special behaviour (seeded, fixed order of draws)
    no_search = sorted(rng.sample(qids, 2))
    loop_modes = (["cutoff-no-evidence"] * 2 + ["cutoff-after-evidence"] * 2 + ["give-up"] * 3
                  + ["late-recovery"] * 5)
    rng.shuffle(loop_modes)
    # the synthesizer can only overreach where its broad search leaves a fact missing
    partial = []
    for q in QUESTIONS:
        ids = [d["id"] for d in retriever.search(q.broad)]
        if q.leap is not None and not all(any(p in ids for p in g) for g in q.groups):
            partial.append(q.qid)
    overreach = sorted(rng.sample(partial, 2))
    traces = []
    for agent in AGENTS:
        for i, q in enumerate(QUESTIONS):
            tb = TraceBuilder(q, retriever)
            meta: dict = {"synthetic": True, "step_budget": STEP_BUDGET}
            try:
                if agent == "careful-planner":
                    careful_planner(tb, rng, meta)
                elif agent == "eager-answerer":
                    eager_answerer(tb, rng, meta, q.qid in no_search)
                elif agent == "looper":
                    looper(tb, rng, meta, loop_modes[i])
                else:
                    synthesizer(tb, rng, meta, q.qid in overreach)
            except CutOff:
                meta["cut_off"] = True
            tid = f"sample-{agent}-{q.qid}"
            traces.append({
                "schema_version": SCHEMA_VERSION,
                "trace_id": tid,
                "agent": agent,
                "dataset": DATASET,
                "question_id": q.qid,
                "question": q.question,
                "gold_answers": list(q.gold),
                "final_answer": tb.final_answer,
                "correct": {"value": bool(tb.correct), "source": "human"},
                "source": {"format": "canonical", "file": None, "line": None, "record_id": tid, "path": None},
                "metadata": meta,
                "inline_labels": {"rater": RATER_1, "kind": "human"},
                "steps": tb.steps,
            })
    traces.sort(key=lambda t: t["trace_id"])
    return traces


def _evidence(labels: dict) -> int:
    return (labels["clarity"] == "Clear") + (labels["sufficiency"] == "Sufficient")


def withhold_labels(traces: list[dict], rng: random.Random) -> dict:
    """Remove a few labels (four whole observations, two reasoning steps, two single fields).

    Only observations that add no evidence (E no higher than an earlier observation of the same
    trace, e.g. a repeated result) lose their labels, so the agents' evidence trajectories, and
    the behaviours they illustrate, stay as written.

    Returns {(trace_id, step): {field: true value}} for the removed labels.
    """
    obs = []
    for t in traces:
        best = -1
        for s in t["steps"]:
            if s["kind"] == "search_result":
                e = _evidence(s["labels"])
                if 0 <= best and e <= best:
                    obs.append((t["trace_id"], s["index"]))
                best = max(best, e)
    rea = [(t["trace_id"], s["index"]) for t in traces for s in t["steps"] if s["kind"] == "reasoning"]
    whole = sorted(rng.sample(obs, 4) + rng.sample(rea, 2))
    rest = [k for k in rea if k not in whole]
    partial = sorted(rng.sample(rest, 2))
    by_key = {(t["trace_id"], s["index"]): s for t in traces for s in t["steps"]}
    withheld = {}
    for key in whole:
        step = by_key[key]
        withheld[key] = dict(step.pop("labels"))
    for key in partial:
        step = by_key[key]
        withheld[key] = {"grounding": step["labels"]["grounding"]}
        step["labels"]["grounding"] = None
    return withheld


FIELDS_BY_KIND = {
    "reasoning": ("reasoning_type", "grounding"),
    "search": ("search_type", "grounding"),
    "search_result": ("clarity", "sufficiency"),
}


def annotation_sets(traces: list[dict], withheld: dict, rng: random.Random) -> tuple[list[dict], list[dict]]:
    """The inline labels as rater 1's set, and a second rater who labels everything and disagrees ~15%."""
    prov1 = {"kind": "human", "time": ANNOTATION_TIME, "source": TRACES_REL.as_posix()}
    prov2 = {"kind": "human", "time": ANNOTATION_TIME, "source": None}
    first, second = [], []
    for t in traces:
        for s in t["steps"]:
            fields = FIELDS_BY_KIND.get(s["kind"], ())
            key = (t["trace_id"], s["index"])
            labels = s.get("labels") or {}
            for f in fields:
                value = labels.get(f)
                rec = {"schema_version": SCHEMA_VERSION, "trace_id": t["trace_id"], "step": s["index"],
                       "field": f, "value": value, "rater": RATER_1, "provenance": dict(prov1)}
                if value is None:
                    rec["unscored_reason"] = "not labeled by the annotator"
                first.append(rec)
                true = value if value is not None else withheld[key][f]
                second.append({"schema_version": SCHEMA_VERSION, "trace_id": t["trace_id"], "step": s["index"],
                               "field": f, "value": true, "rater": RATER_2, "provenance": dict(prov2)})
    flip = {"grounding": {"Grounded": "NotGrounded", "NotGrounded": "Grounded"},
            "clarity": {"Clear": "Unclear", "Unclear": "Clear"},
            "sufficiency": {"Sufficient": "Insufficient", "Insufficient": "Sufficient"}}
    eligible = [i for i, r in enumerate(second) if r["field"] in flip]
    for i in sorted(rng.sample(eligible, round(DISAGREEMENT_RATE * len(eligible)))):
        second[i]["value"] = flip[second[i]["field"]][second[i]["value"]]
    return first, second


def check_behaviours(traces: list[dict]) -> None:
    """Fail loudly if an edit broke the behaviours the sample is meant to show."""
    def e_at_answer(t: dict) -> int:
        e = 0
        for s in t["steps"]:
            lab = s.get("labels") or {}
            if s["kind"] == "search_result" and lab.get("clarity") and lab.get("sufficiency"):
                e = max(e, (lab["clarity"] == "Clear") + (lab["sufficiency"] == "Sufficient"))
        return e

    by_agent: dict[str, list[dict]] = {}
    for t in traces:
        by_agent.setdefault(t["agent"], []).append(t)
        n = len(t["steps"])
        assert 5 <= n <= STEP_BUDGET, (t["trace_id"], n)
    for t in by_agent["careful-planner"]:
        assert t["final_answer"] is not None and t["correct"]["value"], t["trace_id"]
        assert e_at_answer(t) == 2, t["trace_id"]
    eager = by_agent["eager-answerer"]
    assert sum(not t["correct"]["value"] for t in eager) >= 6
    assert sum(e_at_answer(t) < 2 for t in eager) >= 6
    assert sum(not any(s["kind"] == "search" for s in t["steps"]) for t in eager) == 2
    loop = by_agent["looper"]
    assert sum(t["final_answer"] is None for t in loop) == 4
    assert sum(any(s.get("labels", {}).get("search_type") == "RepeatQuery" for s in t["steps"]) for t in loop) >= 8
    syn = by_agent["synthesizer"]
    assert sum(bool(t["correct"]["value"]) for t in syn) >= 9


# --------------------------------------------------------------------------------------------
# Output.
# --------------------------------------------------------------------------------------------


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for r in records:
            fh.write(json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(", ", ": ")) + "\n")


def generate(out_dir: Path) -> dict[str, Path]:
    """Write the five files under ``out_dir``; return their paths."""
    rng = random.Random(SEED)
    traces = build_traces(rng)
    check_behaviours(traces)
    withheld = withhold_labels(traces, rng)
    first, second = annotation_sets(traces, withheld, rng)
    paths = {"traces": out_dir / TRACES_REL, "human": out_dir / HUMAN_REL, "second": out_dir / SECOND_REL,
             "search_r1": out_dir / SEARCH_R1_REL, "release": out_dir / RELEASE_REL}
    _write_jsonl(paths["traces"], traces)
    _write_jsonl(paths["human"], first)
    _write_jsonl(paths["second"], second)
    _write_jsonl(paths["search_r1"], [search_r1_record(t) for t in pick(traces, SEARCH_R1_TRACES)])
    _write_jsonl(paths["release"], [release_record(t) for t in pick(traces, RELEASE_TRACES)])
    return paths


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", type=Path, default=REPO_ROOT,
                   help="root under which seekbench/data/ is written (default: the repo)")
    args = p.parse_args(argv)
    for name, path in generate(args.out_dir).items():
        with open(path, encoding="utf-8") as fh:
            n = sum(1 for _ in fh)
        print(f"{name}: {path} ({n} records)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
