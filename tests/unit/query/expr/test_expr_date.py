"""Date operators in UTC and other zones."""
import datetime

import pytest
from bson.int64 import Int64
from exprkit import code_of, ev

D = datetime.datetime(2021, 1, 3, 14, 5, 6, 789000)


@pytest.mark.parametrize("op,expected", [
    ("$year", 2021), ("$month", 1), ("$dayOfMonth", 3), ("$hour", 14), ("$minute", 5),
    ("$second", 6), ("$millisecond", 789), ("$dayOfWeek", 1), ("$dayOfYear", 3), ("$week", 1),
    ("$isoWeek", 53), ("$isoDayOfWeek", 7),
])
def test_date_parts(op, expected):
    assert ev({op: "$d"}, {"d": D}) == expected


def test_date_parts_with_timezone_and_null():
    assert ev({"$hour": {"date": "$d", "timezone": "+02:00"}}, {"d": D}) == 16
    assert ev({"$hour": {"date": "$d", "timezone": "America/New_York"}}, {"d": D}) == 9
    assert ev({"$year": "$nope"}) is None
    assert ev({"$isoWeekYear": "$d"}, {"d": D}) == Int64(2020)
    assert code_of({"$year": "x"}) == 16006
    assert code_of({"$hour": {"date": "$d", "timezone": "Nowhere/City"}}, {"d": D}) == 40485


def test_date_to_string_formats():
    assert ev({"$dateToString": {"date": "$d"}}, {"d": D}) == "2021-01-03T14:05:06.789Z"
    fmt = "%Y/%m/%d %H:%M:%S.%L %j %w %u %U %V %G %%"
    assert ev({"$dateToString": {"date": "$d", "format": fmt}}, {"d": D}) == \
        "2021/01/03 14:05:06.789 003 1 7 01 53 2020 %"
    assert ev({"$dateToString": {"date": "$nope", "onNull": "none"}}) == "none"
    assert code_of({"$dateToString": {"date": "$d", "format": "%Q"}}, {"d": D}) == 18536


def test_date_from_string():
    assert ev({"$dateFromString": {"dateString": "2017-02-08T12:10:40.787Z"}}) == \
        datetime.datetime(2017, 2, 8, 12, 10, 40, 787000)
    assert ev({"$dateFromString": {"dateString": "2017-02-08T12:10:40+02:00"}}) == \
        datetime.datetime(2017, 2, 8, 10, 10, 40)
    assert ev({"$dateFromString": {"dateString": "08/02/2017", "format": "%d/%m/%Y"}}) == \
        datetime.datetime(2017, 2, 8)
    assert ev({"$dateFromString": {"dateString": "junk", "onError": "bad"}}) == "bad"
    assert code_of({"$dateFromString": {"dateString": "junk"}}) == 241


def test_date_add_subtract_clamp_to_month_end():
    jan31 = datetime.datetime(2021, 1, 31)
    assert ev({"$dateAdd": {"startDate": "$d", "unit": "month", "amount": 1}}, {"d": jan31}) == \
        datetime.datetime(2021, 2, 28)
    assert ev({"$dateSubtract": {"startDate": "$d", "unit": "hour", "amount": 2}}, {"d": D}) == \
        D - datetime.timedelta(hours=2)


def test_date_diff_counts_boundaries():
    a, b = datetime.datetime(2020, 12, 31, 23), datetime.datetime(2021, 1, 1, 1)
    assert ev({"$dateDiff": {"startDate": a, "endDate": b, "unit": "year"}}) == 1
    assert ev({"$dateDiff": {"startDate": a, "endDate": b, "unit": "hour"}}) == 2
    assert ev({"$dateDiff": {"startDate": a, "endDate": b, "unit": "day"}}) == 1


def test_date_trunc():
    assert ev({"$dateTrunc": {"date": "$d", "unit": "month"}}, {"d": D}) == \
        datetime.datetime(2021, 1, 1)
    assert ev({"$dateTrunc": {"date": "$d", "unit": "hour", "binSize": 6}}, {"d": D}) == \
        datetime.datetime(2021, 1, 3, 12)
    assert ev({"$dateTrunc": {"date": "$d", "unit": "week"}}, {"d": D}) == \
        datetime.datetime(2021, 1, 3)


def test_date_from_and_to_parts():
    assert ev({"$dateFromParts": {"year": 2020, "month": 14, "day": 1}}) == \
        datetime.datetime(2021, 2, 1)
    parts = ev({"$dateToParts": {"date": "$d"}}, {"d": D})
    assert parts == {"year": 2021, "month": 1, "day": 3, "hour": 14, "minute": 5, "second": 6,
                     "millisecond": 789}
