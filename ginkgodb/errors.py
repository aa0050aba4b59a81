"""Error hierarchy carrying MongoDB's codes.

Our exception tree:
* GinkgoError
  * StorageError      -- raised by storage engines; a closed set of kinds, never shown to clients as-is
  * CommandError      -- what a client sees as {ok: 0, errmsg, code, codeName}
    * WriteError      -- a per-document failure that a write command reports in writeErrors

Only `commands` turns exceptions into replies; everything below raises.
"""
from __future__ import annotations

import enum
from typing import Any

#: numbers of the members below that are assertion locations (filled while the class body runs)
_LOCATIONS: set[int] = set()


def _location(code: int) -> int:
    """Mark an ErrorCode member as an assertion location: its codeName is 'Location<N>'."""
    _LOCATIONS.add(code)
    return code


class ErrorCode(enum.IntEnum):
    """Server error codes. DO NOT renumber: the numbers are mongod's.

    Members named in mongod's error_codes.yml carry mongod's exact name (their codeName); the
    second block holds assertion locations, named for what failed.
    """

    InternalError = 1
    BadValue = 2
    NoSuchKey = 4
    GraphContainsCycle = 5
    HostUnreachable = 6
    HostNotFound = 7
    UnknownError = 8
    FailedToParse = 9
    UserNotFound = 11
    Unauthorized = 13
    TypeMismatch = 14
    Overflow = 15
    InvalidLength = 16
    ProtocolError = 17
    AuthenticationFailed = 18
    IllegalOperation = 20
    EmptyArrayOperation = 21
    InvalidBSON = 22
    AlreadyInitialized = 23
    LockTimeout = 24
    NamespaceNotFound = 26
    IndexNotFound = 27
    PathNotViable = 28
    NonExistentPath = 29
    InvalidPath = 30
    RoleNotFound = 31
    CannotBackfillArray = 34
    ConflictingUpdateOperators = 40
    CursorNotFound = 43
    LockBusy = 46
    NoMatchingDocument = 47
    NamespaceExists = 48
    MaxTimeMSExpired = 50
    ManualInterventionRequired = 51
    DollarPrefixedFieldName = 52
    InvalidIdField = 53
    NotSingleValueField = 54
    InvalidDBRef = 55
    EmptyFieldName = 56
    DottedFieldName = 57
    CommandNotFound = 59
    ShardKeyNotFound = 61
    OBSOLETE_StaleShardVersion = 63
    WriteConcernFailed = 64
    ImmutableField = 66
    CannotCreateIndex = 67
    IndexAlreadyExists = 68
    ShardNotFound = 70
    InvalidOptions = 72
    InvalidNamespace = 73
    NodeNotFound = 74
    NoReplicationEnabled = 76
    UnknownReplWriteConcern = 79
    IndexOptionsConflict = 85
    IndexKeySpecsConflict = 86
    NetworkTimeout = 89
    ShutdownInProgress = 91
    InvalidReplicaSetConfig = 93
    NotYetInitialized = 94
    NotSecondary = 95
    OperationFailed = 96
    UnsatisfiableWriteConcern = 100
    NewReplicaSetConfigurationIncompatible = 103
    NotExactValueField = 111
    WriteConflict = 112
    CommandNotSupported = 115
    ConflictingOperationInProgress = 117
    NamespaceNotSharded = 118
    DocumentValidationFailure = 121
    NotAReplicaSet = 123
    FailedToSatisfyReadPreference = 133
    ReadConcernMajorityNotAvailableYet = 134
    CappedPositionLost = 136
    JSInterpreterFailure = 139
    ExceededMemoryLimit = 146
    QueryPlanKilled = 175
    ViewDepthLimitExceeded = 149
    StaleEpoch = 150
    CommandNotSupportedOnView = 166
    OptionNotSupportedOnView = 167
    InvalidPipelineOperator = 168
    CannotIndexParallelArrays = 171
    ZoneStillInUse = 163
    ZoneNotFound = 177
    RangeOverlapConflict = 178
    IncompleteTransactionHistory = 217
    ClientMetadataCannotBeMutated = 186
    LinearizableReadConcernError = 187
    PrimarySteppedDown = 189
    FailPointEnabled = 192
    InvalidIndexSpecificationOption = 197
    ClusterTimeFailsRateLimiter = 205
    ElectionInProgress = 216
    IllegalOpMsgFlag = 223
    QueryFeatureNotAllowed = 224
    TransactionTooOld = 225
    MaxSubPipelineDepthExceeded = 232
    TooManyDocumentSequences = 233
    RetryChangeStream = 234
    CursorKilled = 237
    SnapshotTooOld = 239
    NotImplemented = 238
    ConversionFailure = 241
    SnapshotUnavailable = 246
    NoSuchTransaction = 251
    TransactionCommitted = 256
    TransactionTooLarge = 257
    InvalidResumeToken = 260
    ExceededTimeLimit = 262
    OperationNotSupportedInTransaction = 263
    FailPointSetFailed = 266
    PreparedTransactionInProgress = 267
    ChangeStreamFatalError = 280
    ChangeStreamHistoryLost = 286
    ChecksumMismatch = 288
    NoQueryExecutionPlans = 291
    QueryExceededMemoryLimitNoDiskUseAllowed = 292
    APIVersionError = 322
    APIStrictError = 323
    MechanismUnavailable = 334
    UnsupportedOpQueryCommand = 352
    LoadBalancerSupportMismatch = 354
    CannotConvertIndexToUnique = 359
    SocketException = 9001
    NotWritablePrimary = 10107
    BSONObjectTooLarge = 10334
    DuplicateKey = 11000
    InterruptedAtShutdown = 11600
    Interrupted = 11601
    InterruptedDueToReplStateChange = 11602
    MergeStageNoMatchingDocument = 13113
    StaleConfig = 13388
    NotPrimaryNoSecondaryOk = 13435
    NotPrimaryOrSecondary = 13436
    OutOfDiskSpace = 14031
    OBSOLETE_KeyTooLong = 17280
    IDLFailedToParse = 40414
    IDLUnknownField = 40415

    # ---- assertion locations -----------------------------------------------------------------
    # mongod raises these with a bare uassert id: error_codes.yml has no name for them and the
    # reply's codeName is "Location<N>". The member names say what failed; code_name() still
    # replies Location<N> for every member wrapped in _location(). Keep them sorted by number.
    ExpectedObjectParameter = _location(10065)
    SortTooManyCompoundKeys = _location(13103)
    BufferTooLarge = _location(13548)
    GroupFieldsNotObject = _location(15947)
    GroupIdSpecifiedTwice = _location(15948)
    UnknownGroupOperator = _location(15952)
    GroupMissingId = _location(15955)
    LimitNotPositive = _location(15958)
    MatchFilterNotObject = _location(15959)
    ProjectSpecNotObject = _location(15969)
    SortSpecNotObject = _location(15973)
    SortKeyIllegal = _location(15974)
    SortOrderNotOneOrMinusOne = _location(15975)
    SortStageWithoutKeys = _location(15976)
    UnwindSpecNotStringOrObject = _location(15981)
    ExpressionObjectNotSingleField = _location(15983)
    FieldPathEmptyName = _location(15998)
    CannotConvertToLong = _location(16004)
    CannotConvertToDate = _location(16006)
    CannotConvertToString = _location(16007)
    ExpressionArgCountExact = _location(16020)
    SubstrBytesStartNotNumeric = _location(16034)
    SubstrBytesLengthNotNumeric = _location(16035)
    FieldPathDollarPrefixed = _location(16410)
    FieldPathContainsNull = _location(16411)
    FieldPathContainsDot = _location(16412)
    UnwindPathContainsNull = _location(16419)
    StringTooLong = _location(16493)
    GeoNearDistanceFieldMissing = _location(16606)
    ModByZero = _location(16610)
    ModNonNumeric = _location(16611)
    AddMultipleDates = _location(16612)
    ConcatNonString = _location(16702)
    IndexKeyAmbiguousArrayField = _location(16746)
    HashedIndexKeyIsArray = _location(16766)
    TwoDIndexNotFirst = _location(16801)
    VariableNameBadFirstChar = _location(16870)
    VariableNameBadChar = _location(16871)
    FieldPathDollarAlone = _location(16872)
    LetArgNotObject = _location(16874)
    LetUnknownParameter = _location(16875)
    LetMissingVars = _location(16876)
    LetMissingIn = _location(16877)
    MapArgNotObject = _location(16878)
    MapUnknownParameter = _location(16879)
    MapMissingInput = _location(16880)
    MapMissingIn = _location(16882)
    MapInputNotArray = _location(16883)
    AllElementsTrueArgNotArray = _location(17040)
    AnyElementTrueArgNotArray = _location(17041)
    SetIsSubsetSecondArgNotArray = _location(17042)
    SetUnionArgNotArray = _location(17043)
    SetEqualsArgNotArray = _location(17044)
    SetEqualsTooFewArgs = _location(17045)
    SetIsSubsetFirstArgNotArray = _location(17046)
    SetIntersectionArgNotArray = _location(17047)
    SetDifferenceFirstArgNotArray = _location(17048)
    SetDifferenceSecondArgNotArray = _location(17049)
    RedactBadResult = _location(17053)
    CondMissingIf = _location(17080)
    CondMissingThen = _location(17081)
    CondMissingElse = _location(17082)
    CondUnknownParameter = _location(17083)
    SizeArgNotArray = _location(17124)
    UndefinedVariable = _location(17276)
    MetaArgNotString = _location(17307)
    MetaUnsupportedArg = _location(17308)
    SortExpressionNotMeta = _location(17312)
    MatchTextNotFirstStage = _location(17313)
    OutToSpecialCollection = _location(17385)
    GroupIdInclusionStyle = _location(17390)
    UpdatedDocumentTooLarge = _location(17419)
    DateToStringFormatNotString = _location(18533)
    DateToStringUnknownArgument = _location(18534)
    DateFormatUnmatchedPercent = _location(18535)
    DateFormatInvalidChar = _location(18536)
    DateToStringYearOutOfRange = _location(18537)
    DateToStringMissingDate = _location(18628)
    DateToStringArgNotObject = _location(18629)
    FilterArgNotObject = _location(28646)
    FilterUnknownParameter = _location(28647)
    FilterMissingInput = _location(28648)
    FilterMissingCond = _location(28650)
    FilterInputNotArray = _location(28651)
    SubstrBytesStartInUtf8Char = _location(28656)
    SubstrBytesEndInUtf8Char = _location(28657)
    ConcatArraysNonArray = _location(28664)
    ExpressionArgCountRange = _location(28667)
    AbsOfLongMin = _location(28680)
    ArrayElemAtFirstArgNotArray = _location(28689)
    ArrayElemAtIndexNotNumeric = _location(28690)
    ArrayElemAtIndexNotInt32 = _location(28691)
    SqrtOfNegative = _location(28714)
    SliceFirstArgNotArray = _location(28724)
    SliceSecondArgNotNumeric = _location(28725)
    SliceSecondArgNotInt32 = _location(28726)
    SliceThirdArgNotNumeric = _location(28727)
    SliceThirdArgNotInt32 = _location(28728)
    SliceThirdArgNotPositive = _location(28729)
    SampleSpecNotObject = _location(28745)
    SampleSizeNotNumber = _location(28746)
    SampleSizeNotPositive = _location(28747)
    SampleUnknownOption = _location(28748)
    SampleMissingSize = _location(28749)
    LogArgNotNumeric = _location(28756)
    LogBaseNotNumeric = _location(28757)
    LogArgNotPositive = _location(28758)
    LogBaseInvalid = _location(28759)
    Log10ArgNotPositive = _location(28761)
    PowBaseNotNumeric = _location(28762)
    PowExponentNotNumeric = _location(28763)
    PowZeroToNegative = _location(28764)
    NumericUnaryNonNumeric = _location(28765)
    LnArgNotPositive = _location(28766)
    UnwindPathNotString = _location(28808)
    UnwindPreserveNotBool = _location(28809)
    UnwindIncludeArrayIndexNotString = _location(28810)
    UnwindUnknownOption = _location(28811)
    UnwindMissingPath = _location(28812)
    UnwindPathWithoutDollar = _location(28818)
    UnwindIncludeArrayIndexDollarPrefixed = _location(28822)
    UnsetSpecNotStringOrArray = _location(31002)
    RegexMissingInput = _location(31022)
    RegexMissingRegex = _location(31023)
    RegexUnknownArgument = _location(31024)
    DatePartOutOfShortRange = _location(31034)
    IsoWeekYearOutOfRange = _location(31095)
    CannotCoerceToLong = _location(31109)
    UnsetSpecEmptyArray = _location(31119)
    UnsetSpecNonString = _location(31120)
    SortIllegalMeta = _location(31138)
    ProjectionPathCollisionPrefix = _location(31249)
    ProjectionPathCollision = _location(31250)
    ProjectionOperatorInInclusion = _location(31252)
    ProjectionInclusionInExclusion = _location(31253)
    ProjectionExclusionInInclusion = _location(31254)
    ProjectionComputedFieldsBanned = _location(51271)
    ProjectionPositionalWithElemMatch = _location(31255)
    ProjectionElemMatchWithPositional = _location(31256)
    FunctionArgNotObject = _location(31260)
    FunctionBodyMissing = _location(31261)
    FunctionBodyNotString = _location(31262)
    FunctionArgsMissing = _location(31263)
    JavaScriptDisabled = _location(31264)
    FunctionBodyDidNotEvaluate = _location(31265)
    FunctionArgsNotArray = _location(31266)
    PositionalProjectionWithExpression = _location(31271)
    ElemMatchProjectionNotObject = _location(31274)
    ElemMatchProjectionNested = _location(31275)
    ProjectionMultiplePositional = _location(31276)
    IndexMultipleHashedFields = _location(31303)
    PositionalProjectionWithLiteral = _location(31308)
    ProjectionLiteralOperator = _location(31310)
    MergeToSpecialCollection = _location(31319)
    MergeToInternalDatabase = _location(31320)
    OutToInternalDatabase = _location(31321)
    PositionalProjectionInAggregation = _location(31324)
    ProjectionUnknownExpression = _location(31325)
    JsReduceValueTooLarge = _location(31392)
    AwaitableHelloNeedsBothFields = _location(31368)
    TopologyVersionCounterNegative = _location(31372)
    TopologyVersionCounterAhead = _location(31382)
    BsonSizeArgNotObject = _location(31393)
    PositionalProjectionMidPath = _location(31394)
    PositionalProjectionWithExclusion = _location(31395)
    FunctionLangMissing = _location(31418)
    FunctionLangNotJs = _location(31419)
    FunctionBodyNotConstant = _location(31432)
    JsFunctionFailed = _location(31439)
    JsFunctionFailedNoReturn = _location(31470)
    SleepLockAndW = _location(34346)
    ReverseArrayArgNotArray = _location(34435)
    RangeStartNotNumeric = _location(34443)
    RangeStartNotInt32 = _location(34444)
    RangeEndNotNumeric = _location(34445)
    RangeEndNotInt32 = _location(34446)
    RangeStepNotNumeric = _location(34447)
    RangeStepNotInt32 = _location(34448)
    RangeStepZero = _location(34449)
    SubstrCPStartNotNumeric = _location(34450)
    SubstrCPStartNotInt32 = _location(34451)
    SubstrCPLengthNotNumeric = _location(34452)
    SubstrCPLengthNotInt32 = _location(34453)
    SubstrCPLengthNegative = _location(34454)
    SubstrCPStartNegative = _location(34455)
    ZipArgNotObject = _location(34460)
    ZipInputsNotArray = _location(34461)
    ZipDefaultsNotArray = _location(34462)
    ZipUseLongestLengthNotBool = _location(34463)
    ZipUnknownArgument = _location(34464)
    ZipMissingInputs = _location(34465)
    ZipDefaultsWithoutLongest = _location(34466)
    ZipDefaultsLengthMismatch = _location(34467)
    ZipInputNotArray = _location(34468)
    StrLenCPArgNotString = _location(34471)
    StrLenBytesArgNotString = _location(34473)
    SwitchArgNotObject = _location(40060)
    SwitchBranchesNotArray = _location(40061)
    SwitchBranchNotObject = _location(40062)
    SwitchBranchUnknownArgument = _location(40063)
    SwitchBranchMissingCase = _location(40064)
    SwitchBranchMissingThen = _location(40065)
    BucketNoMatchingBranch = _location(40066)
    SwitchUnknownArgument = _location(40067)
    SwitchWithoutBranches = _location(40068)
    SwitchNoMatchingBranch = _location(40069)
    ReduceArgNotObject = _location(40075)
    ReduceUnknownArgument = _location(40076)
    ReduceMissingInput = _location(40077)
    ReduceMissingInitialValue = _location(40078)
    ReduceMissingIn = _location(40079)
    ReduceInputNotArray = _location(40080)
    InSecondArgNotArray = _location(40081)
    SplitFirstArgNotString = _location(40085)
    SplitSecondArgNotString = _location(40086)
    SplitEmptySeparator = _location(40087)
    IndexOfArrayFirstArgNotArray = _location(40090)
    IndexOfBytesFirstArgNotString = _location(40091)
    IndexOfBytesSecondArgNotString = _location(40092)
    IndexOfCPFirstArgNotString = _location(40093)
    IndexOfCPSecondArgNotString = _location(40094)
    IndexOfIndexNotIntegral = _location(40096)
    IndexOfIndexNegative = _location(40097)
    GraphLookupMaxDepthNotNumeric = _location(40100)
    GraphLookupMaxDepthNegative = _location(40101)
    GraphLookupMaxDepthNotLong = _location(40102)
    GraphLookupArgNotString = _location(40103)
    GraphLookupUnknownArgument = _location(40104)
    GraphLookupMissingArgument = _location(40105)
    SortByCountObjectNotExpression = _location(40147)
    SortByCountNotPathOrExpression = _location(40148)
    CountFieldNotString = _location(40156)
    CountFieldEmpty = _location(40157)
    CountFieldDollarPrefixed = _location(40158)
    CountFieldContainsNull = _location(40159)
    CountFieldContainsDot = _location(40160)
    FacetSpecNotObject = _location(40169)
    FacetPipelineNotArray = _location(40170)
    FacetStageNotObject = _location(40171)
    AddFieldsConflictingPaths = _location(40176)
    AddFieldsExpressionNotSingleField = _location(40181)
    AddFieldsDottedSubField = _location(40183)
    GraphLookupRestrictNotObject = _location(40185)
    BucketBoundaryNotConstant = _location(40191)
    BucketTooFewBoundaries = _location(40192)
    BucketBoundariesMixedTypes = _location(40193)
    BucketBoundariesUnsorted = _location(40194)
    BucketOutputNotObject = _location(40196)
    BucketUnknownOption = _location(40197)
    BucketMissingGroupByOrBoundaries = _location(40198)
    BucketDefaultWithinBoundaries = _location(40199)
    BucketBoundariesNotArray = _location(40200)
    BucketSpecNotObject = _location(40201)
    BucketGroupByNotPathOrExpression = _location(40202)
    MetadataNotAvailable = _location(40218)
    ReplaceRootNewRootNotObject = _location(40228)
    ReplaceRootSpecNotObject = _location(40229)
    GroupFieldNotAccumulator = _location(40234)
    GroupFieldNameContainsDot = _location(40235)
    GroupFieldNameIsOperator = _location(40236)
    AccumulatorIsUnary = _location(40237)
    GroupFieldMultipleAccumulators = _location(40238)
    BucketAutoGroupByNotPathOrExpression = _location(40239)
    BucketAutoSpecNotObject = _location(40240)
    BucketAutoBucketsNotNumeric = _location(40241)
    BucketAutoBucketsNotInt32 = _location(40242)
    BucketAutoBucketsNotPositive = _location(40243)
    BucketAutoOutputNotObject = _location(40244)
    BucketAutoUnknownOption = _location(40245)
    BucketAutoMissingGroupByOrBuckets = _location(40246)
    UnknownGranularity = _location(40257)
    GranularityNonNumericValue = _location(40258)
    GranularityNaNValue = _location(40259)
    GranularityNegativeValue = _location(40260)
    GranularityNotString = _location(40261)
    AddFieldsSpecNotObject = _location(40272)
    StageSpecNotSingleField = _location(40323)
    UnrecognizedPipelineStage = _location(40324)
    FieldPathEmpty = _location(40352)
    FieldPathTrailingDot = _location(40353)
    ArrayToObjectInputNotArray = _location(40386)
    ObjectToArrayInputNotObject = _location(40390)
    ArrayToObjectMixedObjectFirst = _location(40391)
    ArrayToObjectPairWrongKeyCount = _location(40392)
    ArrayToObjectPairMissingKOrV = _location(40393)
    ArrayToObjectObjectKeyNotString = _location(40394)
    ArrayToObjectArrayKeyNotString = _location(40395)
    ArrayToObjectMixedArrayFirst = _location(40396)
    ArrayToObjectPairNotSize2 = _location(40397)
    ArrayToObjectBadElementType = _location(40398)
    MergeObjectsInputNotObject = _location(40400)
    OpMsgMultipleBodies = _location(40430)
    OpMsgDuplicateSequence = _location(40431)
    OpMsgUnknownSectionKind = _location(40432)
    OpMsgSequenceDuplicatesBodyField = _location(40433)
    UnknownTimeZone = _location(40485)
    DateFromPartsNaturalWithIso = _location(40489)
    DatePartNotInteger = _location(40515)
    DateFromPartsMissingYear = _location(40516)
    TimeZoneNotString = _location(40517)
    DateFromPartsUnknownArgument = _location(40518)
    DateFromPartsArgNotObject = _location(40519)
    DateToPartsUnknownArgument = _location(40520)
    DateToPartsIso8601NotBool = _location(40521)
    DateToPartsMissingDate = _location(40522)
    DateYearOutOfRange = _location(40523)
    DateToPartsArgNotObject = _location(40524)
    DateFromPartsIsoWithNatural = _location(40525)
    DatePartOperatorUnknownOption = _location(40535)
    DatePartOperatorArrayArgCount = _location(40536)
    DatePartOperatorMissingDate = _location(40539)
    DateFromStringArgNotObject = _location(40540)
    DateFromStringUnknownArgument = _location(40541)
    DateFromStringMissingDateString = _location(40542)
    OpMsgMissingDb = _location(40571)
    ChangeStreamNotAllowed = _location(40573)
    OpMsgMissingBody = _location(40587)
    StageNotAllowedInFacet = _location(40600)
    StageOnlyValidFirst = _location(40602)
    ChangeStreamResumeOptionsConflict = _location(40674)
    DateFromStringFormatNotString = _location(40684)
    TrimUnknownArgument = _location(50694)
    TrimMissingInput = _location(50695)
    TrimArgNotObject = _location(50696)
    TrimInputNotString = _location(50699)
    TrimCharsNotString = _location(50700)
    ConvertShorthandArgCount = _location(50723)
    SubstrBytesStartNegative = _location(50752)
    TxnNumberOnNonRetryableCommand = _location(50768)
    TrigValueOutOfBounds = _location(50989)
    RoleAlreadyExists = _location(51002)
    UserAlreadyExists = _location(51003)
    BatchSizeNegative = _location(51024)
    Atan2NonNumeric = _location(51044)
    StageNotAllowedInLookup = _location(51047)
    RegexOptionsTwiceInRegex = _location(51074)
    RegexOptionsTwiceInOptions = _location(51075)
    RoundDecimalConversionFailed = _location(51080)
    RoundNonNumeric = _location(51081)
    RoundPrecisionNotIntegral = _location(51082)
    RoundPrecisionOutOfRange = _location(51083)
    RegexInvalid = _location(51091)
    RegexOperatorArgNotObject = _location(51103)
    RegexInputNotString = _location(51104)
    RegexRegexNotStringOrRegex = _location(51105)
    RegexOptionsNotString = _location(51106)
    RegexOptionsInBothFields = _location(51107)
    RegexInvalidFlag = _location(51108)
    RegexPatternContainsNull = _location(51109)
    RegexOptionsContainNull = _location(51110)
    RegexCompileFailed = _location(51111)
    RegexFindAllOutputTooLarge = _location(51151)
    RegexMatchFailed = _location(51156)
    SleepSecondsTwice = _location(51153)
    MinMaxNeedsHint = _location(51173)
    MinMaxIndexMismatch = _location(51174)
    MinNotBeforeMax = _location(51175)
    MinMaxFieldsDiffer = _location(51176)
    MergeLetWithoutPipeline = _location(51199)
    PositionalProjectionNoMatch = _location(51246)
    PositionalProjectionMismatch = _location(51247)
    ProjectionEmptySubObject = _location(51270)
    ProjectionEmpty = _location(51272)
    BinarySizeBadArg = _location(51276)
    ReplaceReplacementNotString = _location(51744)
    ReplaceFindNotString = _location(51745)
    ReplaceInputNotString = _location(51746)
    ReplaceMissingReplacement = _location(51747)
    ReplaceMissingFind = _location(51748)
    ReplaceMissingInput = _location(51749)
    ReplaceUnknownArgument = _location(51750)
    ReplaceArgNotObject = _location(51751)
    StandaloneTopologyVersionMismatch = _location(51764)
    FilterLimitNotInt32 = _location(327391)
    FilterLimitNotPositive = _location(327392)
    IfNullTooFewArgs = _location(1257300)
    SortArrayArgNotObject = _location(2942500)
    SortArrayUnknownArgument = _location(2942501)
    SortArrayMissingInput = _location(2942502)
    SortArrayMissingSortBy = _location(2942503)
    SortArrayInputNotArray = _location(2942504)
    SortArraySortByPatternInvalid = _location(2942505)
    SortArraySortByDirectionInvalid = _location(2942506)
    SortArraySortByNotObjectOrNumber = _location(2942507)
    RandTakesNoArguments = _location(3040501)
    GetFieldUnknownArgument = _location(3041701)
    GetFieldMissingField = _location(3041702)
    GetFieldMissingInput = _location(3041703)
    GetFieldFieldNotString = _location(3041704)
    SetFieldArgNotObject = _location(4161100)
    SetFieldUnknownArgument = _location(4161101)
    SetFieldMissingField = _location(4161102)
    SetFieldMissingValue = _location(4161103)
    SetFieldInputNotObject = _location(4161105)
    SetFieldFieldNotConstant = _location(4161106)
    SetFieldFieldNotString = _location(4161107)
    SetFieldFieldIsPath = _location(4161108)
    SetFieldMissingInput = _location(4161109)
    AccumulatorFunctionNotConstant = _location(4544701)
    AccumulatorFunctionNotString = _location(4544702)
    AccumulatorArgNotObject = _location(4544703)
    AccumulatorLangNotString = _location(4544704)
    AccumulatorLangNotJs = _location(4544705)
    AccumulatorUnknownField = _location(4544706)
    AccumulatorMissingInit = _location(4544707)
    AccumulatorMissingAccumulate = _location(4544708)
    AccumulatorMissingMerge = _location(4544709)
    AccumulatorMissingAccumulateArgs = _location(4544710)
    AccumulatorInitArgsNotArray = _location(4544711)
    AccumulatorAccumulateArgsNotArray = _location(4544712)
    WhereCodeWScope = _location(4649201)
    FunctionInValidator = _location(4660800)
    GroupDivideByZero = _location(4848401)
    GroupModByZero = _location(4848403)
    ArrayToObjectArrayKeyContainsNull = _location(4940400)
    ArrayToObjectObjectKeyContainsNull = _location(4940401)
    WhereInvocationError = _location(5038802)
    SkipNotNonNegativeInteger = _location(5107200)
    LimitNotNonNegativeInteger = _location(5107201)
    DateDiffArgNotObject = _location(5166301)
    DateDiffUnknownArgument = _location(5166302)
    DateDiffMissingStartDate = _location(5166303)
    DateDiffMissingEndDate = _location(5166304)
    DateDiffMissingUnit = _location(5166305)
    DateArgNotDate = _location(5166307)
    DateAddArgNotObject = _location(5166400)
    DateAddUnknownArgument = _location(5166401)
    DateAddMissingArgument = _location(5166402)
    DateAddStartDateNotDate = _location(5166403)
    DateAddAmountNotInteger = _location(5166405)
    DateAddOverflow = _location(5166406)
    WindowLowerAboveUpper = _location(5339900)
    WindowDocumentBoundsWithoutSortBy = _location(5339901)
    WindowRangeBoundsSortByNotSingle = _location(5339902)
    WindowRankOperatorWithWindow = _location(5371601)
    WindowRankOperatorSortByNotSingle = _location(5371602)
    WindowRankOperatorArgNotEmpty = _location(5371603)
    PositionalProjectionEmptyPath = _location(5392900)
    WindowRangeSortByNotNumber = _location(5429414)
    WindowTimeRangeSortByNotDate = _location(5429513)
    DateTruncArgNotObject = _location(5439007)
    DateTruncUnknownArgument = _location(5439008)
    DateTruncMissingDate = _location(5439009)
    DateTruncMissingUnit = _location(5439010)
    DateUnitNotString = _location(5439013)
    StartOfWeekNotString = _location(5439015)
    StartOfWeekUnknownDay = _location(5439016)
    DateTruncBinSizeNotLong = _location(5439017)
    DateTruncBinSizeNotPositive = _location(5439018)
    GeoNearNotAllowedHere = _location(5626500)
    AuthenticatedAsAnotherUser = _location(5626701)
    AuthenticatedOnAnotherDatabase = _location(5626702)
    TimestampOperatorArgNotTimestamp = _location(5687301)
    DensifyStepNotPositive = _location(5733401)
    DensifyPartitionWithoutFields = _location(5733408)
    ModDecimalByZero = _location(5733415)
    OpQueryCommandRemoved = _location(5739101)
    NOperatorSpecNotObject = _location(5787801)
    NOperatorUnknownArgument = _location(5787901)
    NOperatorNNotIntegral = _location(5787902)
    NOperatorMissingN = _location(5787906)
    NOperatorMissingInput = _location(5787907)
    NOperatorNNotPositive = _location(5787908)
    TopBottomMissingN = _location(5788003)
    TopBottomMissingSortBy = _location(5788004)
    TopBottomMissingOutput = _location(5788005)
    NOperatorInputNotArray = _location(5788200)
    DocumentsNotArrayOfObjects = _location(5858203)
    SetEqualsConstantArgNotArray = _location(5887502)
    MergeObjectsAccumulatorInputNotObject = _location(5911200)
    DensifyBoundsInvalid = _location(5946802)
    DateAddInvalidResult = _location(5976500)
    ClusteredIndexNotUnique = _location(5979700)
    ClusteredIndexWrongType = _location(5979702)
    ClusteredIndexWrongVersion = _location(5979704)
    ClusteredCollectionWithSize = _location(6049200)
    ClusteredCappedWithoutTTL = _location(6049201)
    ClusteredCollectionWithMax = _location(6049204)
    WhereNoScriptEngine = _location(6108304)
    WhereCompileError = _location(6108306)
    ClusteredCappedNeedsTestCommands = _location(6127800)
    GroupNNotValid = _location(7548606)
    PipelineTooLong = _location(7749501)
    PercentilePNotArrayOfNumbers = _location(7750301)
    PercentilePValueOutOfRange = _location(7750303)
    WindowRangeSortByNotAscending = _location(8947401)
    CountFieldIsId = _location(9039800)
    SetFieldFieldContainsNull = _location(9534700)


#: the members whose codeName is "Location<N>" (mongod gives them no name)
LOCATION_CODES: frozenset[ErrorCode] = frozenset(ErrorCode(n) for n in _LOCATIONS)
_CODE_NAMES = {c.value: c.name for c in ErrorCode if c not in LOCATION_CODES}


def code_name(code: int) -> str:
    """mongod's codeName for a numeric code; 'Location<N>' for assertion ids without a name."""
    return _CODE_NAMES.get(int(code), f"Location{int(code)}")


class GinkgoError(Exception):
    """Root of every error ginkgodb raises on purpose."""


class StorageError(GinkgoError):
    """Storage-layer failure; `kind` is one of KINDS. Commands map these to CommandError."""

    KINDS = frozenset({"map_full", "locked", "corrupt", "closed", "io", "disk_full"})

    def __init__(self, kind: str, message: str) -> None:
        assert kind in self.KINDS, kind
        super().__init__(f"{kind}: {message}")
        self.kind, self.message = kind, message


class CommandError(GinkgoError):
    """A failure the client sees as {ok: 0, errmsg, code, codeName}; raise from commands/ down."""

    def __init__(self, code: ErrorCode, errmsg: str, *, labels: tuple[str, ...] = (),
                 info: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code_name(code)} ({int(code)}): {errmsg}")
        self.code = int(code)
        self.errmsg = errmsg
        self.labels = labels
        self.info = info or {}  # extra reply fields (keyPattern/keyValue, errInfo, ...)

    @property
    def code_name(self) -> str:
        return code_name(self.code)

    def to_reply(self) -> dict[str, Any]:
        reply: dict[str, Any] = {"ok": 0.0, "errmsg": self.errmsg, "code": self.code,
                                 "codeName": self.code_name}
        reply.update(self.info)
        if self.labels:
            reply["errorLabels"] = list(self.labels)
        return reply

    def to_write_error(self, index: int) -> dict[str, Any]:
        entry: dict[str, Any] = {"index": index, "code": self.code, "errmsg": self.errmsg}
        entry.update(self.info)
        return entry


class WriteError(CommandError):
    """A per-document write failure (reported in writeErrors, the command itself succeeds)."""


def bad_value(msg: str) -> CommandError:
    return CommandError(ErrorCode.BadValue, msg)


def failed_to_parse(msg: str) -> CommandError:
    return CommandError(ErrorCode.FailedToParse, msg)


def type_mismatch(msg: str) -> CommandError:
    return CommandError(ErrorCode.TypeMismatch, msg)
