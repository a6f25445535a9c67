import FeatureFlags
import FeatureFlagsCompat
import FlagsProtocol
import TestSupport
import Testing

/// The client boundary's one error: a code, a message, a cause, and the text the CLI prints as it is.
@Suite(.hangLimit) struct ClientErrorTests {
    @Test(arguments: [
        (ClientError.unreachable(socketPath: "/run/x.sock", reason: "ENOENT"), ClientError.Code.unreachable),
        (.disconnected(socketPath: "/run/x.sock"), .disconnected),
        (.rpc(.notPermitted("reload")), .rejected),
        (.protocolViolation("garbage"), .protocolViolation),
    ])
    func everyErrorHasACode(error: ClientError, code: ClientError.Code) {
        #expect(error.code == code)
        #expect(error.cause == nil || code == .rejected)
    }

    @Test func aRefusalKeepsTheDaemonsErrorAsItsCause() {
        let error = ClientError.rpc(.notPermitted("setUserId"))
        #expect(error.cause == .notPermitted("setUserId"))
        #expect(error.description == "not permitted: setUserId is limited to ControlGroups")
    }

    @Test func aFailedRefreshSaysItsStatusInTheSDKsDomain() {
        let error = ClientError.rpc(.refreshFailed(status: 503, reason: "HTTP 503"))
        #expect(error.message == "refresh failed: HTTP 503")
        #expect(error.description == "refresh failed: HTTP 503 (PWFeatureFlagsErrorDomain status 503)")
    }

    @Test func aBrokenConfigurationListsEveryProblemOnItsOwnLine() {
        let error = ClientError.rpc(.invalidConfiguration(problems: ["/etc/a.conf:3: bad", "/etc/b.conf:1: worse"]))
        #expect(
            error.description
                == "invalid configuration; the running one stays\n  /etc/a.conf:3: bad\n  /etc/b.conf:1: worse")
    }

    @Test func unreachableNamesTheSocket() {
        let error = ClientError.unreachable(socketPath: "/run/x.sock", reason: "No such file or directory")
        #expect(error.description == "cannot reach pwflagsd at /run/x.sock: No such file or directory")
    }
}
