// A planbake client in Java 11+ (java.net.http, no libraries): look a question up, then retrieve its context.
//   java examples/Example.java [BASE_URL] [QUESTION]
// BASE_URL defaults to http://127.0.0.1:8080 (`planbake serve`). A real service would parse the JSON with its own
// library (Jackson, Gson); this example reads a few fields with patterns to stay a single file.

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class Example {
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    static String post(String base, String path, String body) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        HttpResponse<String> res = HTTP.send(req, HttpResponse.BodyHandlers.ofString());
        if (res.statusCode() != 200) {
            throw new RuntimeException(path + ": " + res.statusCode() + " " + res.body());
        }
        return res.body();
    }

    static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }

    static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":(\"[^\"]*\"|true|false|null|\\d+)").matcher(json);
        return m.find() ? m.group(1).replace("\"", "") : "";
    }

    static int count(String json, String pattern) {
        Matcher m = Pattern.compile(pattern).matcher(json);
        int n = 0;
        while (m.find()) n++;
        return n;
    }

    public static void main(String[] args) throws Exception {
        String base = args.length > 0 ? args[0] : "http://127.0.0.1:8080";
        String question = args.length > 1 ? args[1]
                : "Compare parental leave for the second parent in Berlin and Amsterdam";
        String body = "{\"question\":" + quote(question) + ",\"user\":\"java-example\"}";

        String found = post(base, "/v1/lookup", body);
        System.out.println("lookup: " + ("true".equals(field(found, "hit")) ? "hit" : "miss")
                + ", route " + field(found, "route") + ", run " + field(found, "run_id"));

        String got = post(base, "/v1/retrieve", body);
        int notCovered = got.contains("\"not_covered\":[]") ? 0 : count(got, "\"reason\":\"[^\"]*\",?\\}");
        System.out.println("retrieve: run " + field(got, "run_id") + ", searches " + field(got, "searches")
                + ", parts not covered " + notCovered);
        System.out.println("{\"lookup_hit\":" + field(found, "hit") + ",\"run_id\":\"" + field(got, "run_id")
                + "\",\"searches\":" + field(got, "searches") + "}");
    }
}
